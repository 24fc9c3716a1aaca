#include "cli/verify_cases.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "cli/case_input.h"
#include "cli/data_dirs.h"
#include "cli/sut_flags.h"
#include "r3/case/case_format.h"
#include "r3/sample/case_sampler.h"

namespace r3::cli {

std::string GeneratedName(int64_t index, uint64_t seed) {
  return "generated case " + std::to_string(index) + " (seed " + std::to_string(seed) + ")";
}

std::string ResolveVerifyCorpus(const std::string& flag) {
  const std::string corpus = flag.empty() ? DefaultCorpusDir() : flag;
  // A mistyped folder would otherwise verify nothing but generated cases
  // and still say OK.
  std::error_code ec;
  const std::string setting = flag.empty() ? "R3CHECK_CORPUS" : "--corpus";
  if (!std::filesystem::is_directory(corpus, ec)) {
    throw UsageError(setting + ": no such folder: " + corpus);
  }
  // A folder that is no corpus (a wrong path) would verify no file.
  bool any = false;
  for (const char* sub : {"/regressions", "/seeds", "/findings"}) {
    any = any || std::filesystem::is_directory(corpus + sub, ec);
  }
  if (!any) {
    throw UsageError(setting + ": " + corpus +
                     " is not a corpus (it has no regressions/, seeds/ or findings/ folder)");
  }
  return corpus;
}

CorpusFiles ListVerifyCorpus(const std::string& corpus) {
  return {ListCorpusFolder(corpus + "/regressions"), ListCorpusFolder(corpus + "/seeds"),
          ListCorpusFolder(corpus + "/findings")};
}

void ForEachVerifyBatch(const CorpusFiles& corpus, int64_t cases, uint64_t seed,
                        int64_t batch_size, const LayoutDomain& domain,
                        const std::function<void(const CaseBatch&)>& judge) {
  const std::pair<const char*, const std::vector<std::string>*> folders[] = {
      {"regressions", &corpus.regressions}, {"seeds", &corpus.seeds}, {"findings", &corpus.findings}};
  for (const auto& [label, files] : folders) {
    CaseBatch batch;
    batch.label = label;
    batch.expect_finding = batch.label == "findings";
    for (const std::string& path : *files) {
      Case c = LoadCaseFile(path);
      if ((batch.expect_finding && !domain.vllm_findings) ||
          !OutsideDomain(domain, c, "").field.empty()) {
        batch.outside.push_back(path);
        continue;
      }
      batch.sources.push_back(path);
      batch.cases.push_back(std::move(c));
    }
    judge(batch);
  }
  sample::CaseSampler sampler(seed, domain);
  for (int64_t i = 0; i < cases; i += batch_size) {
    CaseBatch batch;
    batch.label = "generated";
    batch.first_index = i;
    const int64_t count = std::min(batch_size, cases - i);
    for (int64_t k = 0; k < count; ++k) {
      batch.cases.push_back(sampler.Next());
      batch.sources.push_back(GeneratedName(i + k, seed));
    }
    judge(batch);
  }
}

CaseOutcome Classify(const check::CaseResult& result, bool expect_finding) {
  if (!result.PassesOrKnown()) return CaseOutcome::kFail;
  if (!result.verdict.ok()) return CaseOutcome::kKnown;
  return expect_finding ? CaseOutcome::kFindingGone : CaseOutcome::kPass;
}

}  // namespace r3::cli
