// libFuzzer target: the input is a case file. Invalid input is rejected with
// -1 (never added to the corpus); a valid case runs through the chosen SUT
// (see fuzz_sut.h) and every invariant is checked for every rank. A
// violation no known finding explains prints the verdict and the case in the
// r3case format, then aborts, so the crash file minimizes with
// `r3check minimize`.
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/fuzz_sut.h"
#include "fuzz/replay_hooks.h"
#include "r3/case/case_format.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"

namespace {

// The cost of one input is capped by work, not by rank count alone. The SUT
// and the judge walk every rank's rows, and those rows are runs of the
// gathered batch: up to one segment per DP rank, or per SP shard (DP x TP)
// when SP is on. A wrong capture can hold all of them, so one input costs up
// to ranks x segments. Cases above the cap are rejected (-1): under ASan they
// take milliseconds each and would starve the small cases that find the
// bugs. Since segments >= DP >= ranks / 64, the cap also keeps ranks <= 2048.
// The property suite and run_case_test cover the larger shapes instead
// (docs/fuzzing.md).
constexpr int64_t kMaxFuzzWork = 65536;

// Ranks x segments; dp <= 1024 and tp <= 64, so no overflow.
int64_t Work(const r3::Config& cfg) {
  const int64_t ranks = cfg.dp * cfg.tp;
  const int64_t segments = r3::SpEnabled(cfg) ? ranks : cfg.dp;
  return ranks * segments;
}

std::shared_ptr<r3::sut::Producer>& Producer() {
  static std::shared_ptr<r3::sut::Producer> producer;
  return producer;
}

}  // namespace

extern "C" {
volatile std::sig_atomic_t r3_fuzz_finding = 0;
}

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  Producer() = r3::fuzz::ProducerFromEnvAndArgs(*argc, *argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  r3::Case c;
  try {
    c = r3::ParseCase(text, "<fuzz>");
  } catch (const r3::CaseFormatError&) {
    return -1;
  }
  if (Work(c.config) > kMaxFuzzWork) return -1;
  const r3::check::CaseResult result = std::move(r3::check::RunCases({&c, 1}, *Producer()).at(0));
  if (!result.PassesOrKnown()) {
    const std::string verdict = r3::check::VerdictText("<fuzz>", result, *Producer());
    const std::string printed = r3::PrintCase(c);
    std::fprintf(stderr, "r3 fuzz: unexplained invariant violation\n%s--- case ---\n%s------------\n",
                 verdict.c_str(), printed.c_str());
    r3_fuzz_finding = 1;  // the abort is a finding, not a crash (replay_hooks.h)
    std::abort();
  }
  return 0;
}
