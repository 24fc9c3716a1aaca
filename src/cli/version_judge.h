// One version of an engine judged the way `verify` judges a SUT: its adapter
// started (the --engine-* flags), verify's corpus and generated cases run,
// and the first failure minimized. For `sweep`.
#ifndef R3_CLI_VERSION_JUDGE_H_
#define R3_CLI_VERSION_JUDGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cli/sut_flags.h"
#include "cli/verify_cases.h"
#include "r3/check/verdict.h"

namespace r3::cli {

struct JudgeSettings {
  SutFlags flags;  // its `sut` is set per version
  std::string engine = "vllm";  // the adapter: each version runs as --sut ENGINE:PATH
  CorpusFiles corpus;
  int64_t cases = 300;
  uint64_t seed = 1;
  int64_t budget_ms = 10000;  // for minimizing the first failure
};

struct VersionVerdict {
  enum class Word { kPass, kFail, kError };
  Word word = Word::kError;
  std::string error;  // kError: one line
  // From the adapter's hello ("unknown" where it did not say).
  std::string engine_version = "unknown";
  std::string interface = "unknown";
  int64_t cases = 0;    // judged
  int64_t failing = 0;  // of them, failing (verify's count)
  // Every invariant a failing case violates without a known finding to
  // explain it, sorted.
  std::vector<check::Invariant> invariants;
  // A findings/ case that no longer fails (its known finding is gone).
  bool finding_gone = false;
  std::string first_failure;  // the first failing case's source
  // The first failing case minimized, on one line (CaseOneLine); empty when
  // the failure is no case that fails (a finding gone).
  std::string minimized;
  std::vector<check::Invariant> minimized_invariants;
};

std::string WordText(VersionVerdict::Word word);  // PASS | FAIL | ERROR

// Runs `--sut vllm:PATH`. Throws only what is no verdict of this version
// (an unreadable corpus file); an adapter that does not start or breaks
// the protocol is Word::kError.
VersionVerdict JudgeVersion(const std::string& sut_path, const JudgeSettings& settings);

// "rows-exact,concat-global"
std::string InvariantNames(const std::vector<check::Invariant>& invariants);

}  // namespace r3::cli

#endif  // R3_CLI_VERSION_JUDGE_H_
