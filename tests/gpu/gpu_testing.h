// Helpers shared by the GPU tests: the corpus, one runner per mode, and the
// comparison of a GPU observation with the host SUT's.
#ifndef R3_TESTS_GPU_GPU_TESTING_H_
#define R3_TESTS_GPU_GPU_TESTING_H_

#include <set>
#include <string>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/case/corpus.h"
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
