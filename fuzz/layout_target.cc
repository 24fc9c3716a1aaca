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

// Judging is linear in ranks times segments; a 1024x64 deployment takes a
// second per input. Such sizes are the property suite's job: here they would
// only slow every other input down.
constexpr int64_t kMaxFuzzRanks = 4096;

r3::sut::SutOptions& Options() {
  static r3::sut::SutOptions options;
  return options;
}

}  // namespace

extern "C" {
volatile std::sig_atomic_t r3_fuzz_finding = 0;
}

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  Options() = r3::fuzz::SutOptionsFromEnvAndArgs(*argc, *argv);
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
  if (c.config.dp * c.config.tp > kMaxFuzzRanks) return -1;
  const r3::check::CaseResult result = r3::check::RunCase(c, Options());
  if (!result.PassesOrKnown()) {
    const std::string verdict = r3::check::VerdictText("<fuzz>", result, Options());
    const std::string printed = r3::PrintCase(c);
    std::fprintf(stderr, "r3 fuzz: unexplained invariant violation\n%s--- case ---\n%s------------\n",
                 verdict.c_str(), printed.c_str());
    r3_fuzz_finding = 1;  // the abort is a finding, not a crash (replay_hooks.h)
    std::abort();
  }
  return 0;
}
