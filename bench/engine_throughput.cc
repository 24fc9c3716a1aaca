// Rank-captures per second through an engine SUT, next to the built-in SUT on
// the same generated cases (r3check's verify sampler). The clock covers what
// `verify` pays per case: the dispatch plan, the request, the adapter's
// captures, the reply, and judging; adapter start-up and hello are excluded.
//
//   engine_throughput --sut vllm:PATH [--cases 4000] [--seed 1] [--engine-python PY]
//       [--engine-launch none|torchrun] [--nproc N] [--engine-device cpu|cuda]
//       [--label NAME] [--json FILE]
#include <chrono>
#include <memory>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "r3/check/run_case.h"
#include "r3/engine/engine_sut.h"
#include "r3/sample/case_sampler.h"
#include "r3check_config.h"

namespace {

struct Rate {
  double seconds = 0;
  int64_t ranks = 0;
  int64_t failing = 0;
  double per_s() const { return static_cast<double>(ranks) / seconds; }
};

Rate Measure(const std::vector<r3::Case>& cases, r3::sut::Producer& producer) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<r3::check::CaseResult> results = r3::check::RunCases(cases, producer);
  Rate rate;
  rate.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < cases.size(); ++i) {
    rate.ranks += cases[i].config.dp * cases[i].config.tp;
    rate.failing += results[i].PassesOrKnown() ? 0 : 1;
  }
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rank-captures/s through an engine SUT and the built-in SUT"};
  std::string sut;
  int64_t cases = 4000;
  uint64_t seed = 1;
  std::string label = "engine";
  std::string json_path;
  r3::engine::LaunchOptions launch;
  const char* engines_env = std::getenv("R3_ENGINES_DIR");
  launch.adapters_dir = engines_env != nullptr && *engines_env ? engines_env : R3CHECK_SOURCE_ENGINES;
  app.add_option("--sut", sut, "engine SUT: vllm:PATH | exec:CMD")->required();
  app.add_option("--cases", cases, "generated cases");
  app.add_option("--seed", seed, "sampler seed");
  app.add_option("--engine-python", launch.python, "adapter interpreter");
  app.add_option("--engine-launch", launch.launch, "none | torchrun");
  app.add_option("--nproc", launch.nproc, "torchrun processes");
  app.add_option("--engine-device", launch.device, "cpu | cuda");
  double timeout_s = 600;
  app.add_option("--engine-timeout", timeout_s, "seconds per request");
  app.add_option("--label", label, "name of this run in the JSON");
  app.add_option("--json", json_path, "also write the result here");
  CLI11_PARSE(app, argc, argv);
  launch.timeout_ms = static_cast<int64_t>(timeout_s * 1000);

  r3::sample::CaseSampler sampler(seed);
  std::vector<r3::Case> batch;
  for (int64_t i = 0; i < cases; ++i) batch.push_back(sampler.Next());

  const Rate builtin = Measure(batch, *r3::sut::MakeHostProducer());
  std::shared_ptr<r3::sut::Producer> producer;
  try {
    producer = r3::engine::StartEngine(r3::engine::ResolveEngine(sut, launch), {});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "engine_throughput: %s\n", e.what());
    return 2;
  }
  const Rate engine = Measure(batch, *producer);
  const nlohmann::json out = {
      {"label", label},
      {"sut", producer->Label()},
      {"launch", launch.launch},
      {"nproc", launch.nproc},
      {"device", launch.device},
      {"cases", cases},
      {"seed", seed},
      {"rank_captures", engine.ranks},
      {"engine", {{"seconds", engine.seconds}, {"rank_captures_per_s", engine.per_s()},
                  {"failing_cases", engine.failing}}},
      {"builtin", {{"seconds", builtin.seconds}, {"rank_captures_per_s", builtin.per_s()},
                   {"failing_cases", builtin.failing}}},
  };
  std::cout << out.dump(2) << "\n";
  if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << "\n";
  return 0;
}
