// Helpers shared by the GPU tests: the corpus, one runner per mode, and the
// comparison of a GPU observation with the host SUT's.
#ifndef R3_TESTS_GPU_GPU_TESTING_H_
#define R3_TESTS_GPU_GPU_TESTING_H_

#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/case/corpus.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"
#include "r3/gpu/gpu.h"
#include "r3check_config.h"

namespace r3::gpu::testing {

inline std::vector<std::string> CorpusFiles(const std::string& sub) {
  return ListCaseFiles(std::string(R3CHECK_SOURCE_CORPUS) + "/" + sub);
}

inline std::set<int> ViolatedInvariants(const check::Verdict& v) {
  std::set<int> out;
  for (const check::Violation& x : v.violations) out.insert(static_cast<int>(x.invariant));
  return out;
}

// A GPU observation judged as every front end judges it, beside the host
// SUT's observation of the same case.
struct GpuCaseResult {
  check::CaseResult result;
  sut::Observation host;
  std::string mode;
  int64_t steps = 0;
  int64_t values_checked = 0;
  int64_t wrong_values = 0;

  bool Passes() const { return result.PassesOrKnown(); }
  std::string Summary() const { return check::DeviceLine(result.observation); }
};

inline std::vector<GpuCaseResult> RunOnGpu(Runner& runner, std::span<const Case> cases) {
  std::vector<sut::Observation> observations = runner.Observe(cases);
  std::vector<GpuCaseResult> out;
  for (size_t i = 0; i < cases.size(); ++i) {
    GpuCaseResult r;
    const sut::DeviceCheck device = observations[i].device.value();
    r.mode = device.mode;
    r.steps = device.steps;
    r.values_checked = device.values_checked;
    r.wrong_values = device.wrong_values;
    r.result = check::JudgeObservation(cases[i], std::move(observations[i]));
    r.host = sut::RunSut(cases[i], runner.options());
    out.push_back(std::move(r));
  }
  return out;
}

inline GpuCaseResult RunOnGpu(Runner& runner, const Case& c) {
  return std::move(RunOnGpu(runner, std::span<const Case>(&c, 1)).at(0));
}

inline GpuCaseResult RunOnGpu(Runner&& runner, const Case& c) { return RunOnGpu(runner, c); }

// Empty when the GPU saw, per rank, what the host SUT computed symbolically.
inline std::string DiffAgainstHost(const GpuCaseResult& r) {
  const sut::Observation& gpu = r.result.observation;
  const sut::Observation& host = r.host;
  std::string diff;
  for (size_t i = 0; i < host.ranks.size(); ++i) {
    const sut::RankObservation& g = gpu.ranks[i];
    const sut::RankObservation& h = host.ranks[i];
    if (g.n != h.n) diff += "rank " + std::to_string(i) + ": n " + std::to_string(g.n) + "\n";
    if (g.captured != h.captured) {
      diff += "rank " + std::to_string(i) + ": gpu " + DescribeRuns(g.captured) + " host " +
              DescribeRuns(h.captured) + "\n";
    }
  }
  return diff;
}

}  // namespace r3::gpu::testing

#endif  // R3_TESTS_GPU_GPU_TESTING_H_
