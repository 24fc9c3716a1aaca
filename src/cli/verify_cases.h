// The cases `verify` judges, in its order, and how each result counts: one
// definition for `verify` and for `sweep` (which runs verify's cases on each
// version). Regressions first (the cases that failed before), then the
// seeds, the known findings (each must still fail in its known way), then
// the generated cases of one seed, in batches.
#ifndef R3_CLI_VERIFY_CASES_H_
#define R3_CLI_VERIFY_CASES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/check/run_case.h"

namespace r3::cli {

// How a generated case is named everywhere (reports, --junit, --replay).
std::string GeneratedName(int64_t index, uint64_t seed);

// The corpus folder to run: `flag` (verify --corpus) when set, else
// DefaultCorpusDir(). Throws UsageError, naming --corpus or R3CHECK_CORPUS,
// when it is no folder or has none of regressions/, seeds/, findings/.
std::string ResolveVerifyCorpus(const std::string& flag);

// The sources in order, each present even when it holds no case.
inline const std::vector<std::string>& VerifyLabels() {
  static const std::vector<std::string> labels = {"regressions", "seeds", "findings",
                                                  "generated"};
  return labels;
}

// The case files of a corpus's folders, listed once (ListCorpusFolder).
struct CorpusFiles {
  std::vector<std::string> regressions, seeds, findings;
};

CorpusFiles ListVerifyCorpus(const std::string& corpus);

struct CaseBatch {
  std::string label;                 // one of VerifyLabels()
  std::vector<std::string> sources;  // a file, or GeneratedName(...)
  std::vector<Case> cases;
  bool expect_finding = false;  // findings/: a pass is a failure
  int64_t first_index = -1;     // generated: the first case's number; -1 for files
  // Corpus files whose layout the producer does not model (layout_domain.h):
  // not run, and said so.
  std::vector<std::string> outside;
};

// Calls `judge` on each batch in order: each corpus folder as one batch
// (possibly empty; its files read just before), then `cases` generated cases
// of `seed` in batches of at most `batch_size`, all within `domain` (corpus
// files outside it go to CaseBatch::outside). Throws what reading a case
// file throws (CaseFormatError).
void ForEachVerifyBatch(const CorpusFiles& corpus, int64_t cases, uint64_t seed,
                        int64_t batch_size, const LayoutDomain& domain,
                        const std::function<void(const CaseBatch&)>& judge);

enum class CaseOutcome {
  kPass,
  kKnown,         // fails only in ways known findings explain
  kFail,          // a violation no known finding explains
  kFindingGone,   // a findings/ case that no longer fails: the engine changed
};

CaseOutcome Classify(const check::CaseResult& result, bool expect_finding);

}  // namespace r3::cli

#endif  // R3_CLI_VERIFY_CASES_H_
