// Kill-matrix benchmark (not a test): for each kill target (bench over
// `--seeds` seeds), the cases and seconds RapidCheck needs to first detect
// it with the all-invariants property (no shrinking: time to first
// detection), the detection rate within `--max-cases`, plus the checked
// cases per second of the default suite. Writes JSON (bench/results/).
//
//   ./build-props/bench/kill_matrix_bench --seeds 20
//       --out bench/results/kill_matrix.json
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "properties/case_gen.h"
#include "properties/kill_matrix.h"
#include "r3/check/run_case.h"

namespace {

using r3::props::KillTarget;
using r3::props::PropertyRun;

template <typename T>
T Median(std::vector<T> v) {
  if (v.empty()) return T{};
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"r3check kill-matrix benchmark"};
  int seeds = 20;
  int max_cases = 100;
  int throughput_cases = 20000;
  std::string out = "bench/results/kill_matrix.json";
  app.add_option("--seeds", seeds, "seeds per target (1..N)")->check(CLI::Range(1, 1000));
  app.add_option("--max-cases", max_cases, "cases per seed (RapidCheck's default is 100)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--throughput-cases", throughput_cases, "cases for the cases/s measurement")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--out", out, "JSON output path");
  CLI11_PARSE(app, argc, argv);

  nlohmann::ordered_json json;
  json["seeds"] = seeds;
  json["max_cases"] = max_cases;
  nlohmann::ordered_json targets = nlohmann::ordered_json::array();
  bool all_ok = true;
  for (const KillTarget& target : r3::props::KillTargets()) {
    std::vector<int> cases;
    std::vector<double> seconds;
    int detected = 0;
    // Survivors get 10x the cases: "never killed" needs more evidence.
    const int budget = target.must_survive ? 10 * max_cases : max_cases;
    for (int seed = 1; seed <= seeds; ++seed) {
      const PropertyRun run = r3::props::RunProperty(std::nullopt, target.options,
                                                     static_cast<uint64_t>(seed), budget,
                                                     /*shrink=*/false);
      if (run.error) {
        std::cerr << target.name << " seed " << seed << ": " << run.message << "\n";
        return 1;
      }
      if (!run.failed) continue;
      ++detected;
      cases.push_back(run.cases);
      seconds.push_back(run.seconds);
    }
    const bool ok = target.must_survive ? detected == 0 : detected == seeds;
    all_ok &= ok;
    nlohmann::ordered_json t;
    t["target"] = target.name;
    t["must_survive"] = target.must_survive;
    t["cases_per_seed"] = budget;
    t["detected"] = detected;
    t["detection_rate"] = static_cast<double>(detected) / seeds;
    t["median_cases"] = Median(cases);
    t["max_cases"] = cases.empty() ? 0 : *std::max_element(cases.begin(), cases.end());
    t["median_ms"] = Median(seconds) * 1e3;
    t["max_ms"] = seconds.empty() ? 0.0 : *std::max_element(seconds.begin(), seconds.end()) * 1e3;
    t["ok"] = ok;
    targets.push_back(t);
    std::cout << target.name << ": " << detected << "/" << seeds << " detected, median "
              << t["median_cases"] << " cases (max " << t["max_cases"] << "), median "
              << t["median_ms"].get<double>() << " ms" << (ok ? "" : "  <-- NOT OK") << "\n";
  }
  json["targets"] = targets;

  // Throughput of the default suite: the all-invariants property on the
  // default SUT (model + SUT + invariants + classification per case).
  const PropertyRun run = r3::props::RunProperty(std::nullopt, r3::sut::SutOptions{},
                                                 /*seed=*/1, throughput_cases, /*shrink=*/false);
  json["default_suite"] = {{"cases", run.cases},
                           {"seconds", run.seconds},
                           {"cases_per_second", run.cases / run.seconds},
                           {"passed", !run.failed}};
  std::cout << "default suite: " << run.cases << " cases in " << run.seconds << " s = "
            << run.cases / run.seconds << " cases/s" << (run.failed ? " (FAILED)" : "") << "\n";
  all_ok &= !run.failed;

  // Where the time goes: generating cases alone, and judging the same cases
  // alone (model + SUT + invariants), outside RapidCheck's runner.
  const rc::Gen<r3::Case> gen = r3::props::GenCase();
  rc::Random random(/*seed=*/1);
  std::vector<r3::Case> cases;
  cases.reserve(static_cast<size_t>(throughput_cases));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < throughput_cases; ++i) cases.push_back(gen(random.split(), 100).value());
  const auto t1 = std::chrono::steady_clock::now();
  int64_t violations = 0;
  for (const r3::Case& c : cases) {
    violations += static_cast<int64_t>(
        r3::check::RunCase(c, r3::sut::SutOptions{}).verdict.violations.size());
  }
  const auto t2 = std::chrono::steady_clock::now();
  const double gen_s = std::chrono::duration<double>(t1 - t0).count();
  const double judge_s = std::chrono::duration<double>(t2 - t1).count();
  json["breakdown"] = {{"cases", throughput_cases},
                       {"generate_cases_per_second", throughput_cases / gen_s},
                       {"judge_cases_per_second", throughput_cases / judge_s},
                       {"known_finding_violations", violations}};
  std::cout << "generate only: " << throughput_cases / gen_s
            << " cases/s; judge only (RunCase): " << throughput_cases / judge_s << " cases/s\n";

  std::ofstream file(out);
  if (!file) {
    std::cerr << "error: --out: cannot write " << out << "\n";
    return 1;
  }
  file << json.dump(2) << "\n";
  return all_ok ? 0 : 2;
}
