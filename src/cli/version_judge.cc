#include "cli/version_judge.h"

#include <algorithm>

#include "cli/case_one_line.h"
#include "r3/check/run_case.h"
#include "r3/engine/engine_sut.h"
#include "r3/minimize/minimize.h"
#include "cli/producer_flags.h"
#include "r3/sut/producer.h"

namespace r3::cli {
namespace {

// Starts the engine; its version and interface go on the version's line.
std::shared_ptr<sut::Producer> StartEngine(const SutFlags& flags, VersionVerdict* verdict) {
  std::shared_ptr<sut::Producer> engine = MakeProducer(flags, GpuFlags{});
  verdict->engine_version = engine->EngineVersion();
  verdict->interface = engine->Interface();
  return engine;
}

void AddUnexplained(const check::CaseResult& result, std::vector<check::Invariant>* out) {
  for (size_t i = 0; i < result.verdict.violations.size(); ++i) {
    if (result.explained[i] != nullptr) continue;
    const check::Invariant inv = result.verdict.violations[i].invariant;
    if (std::find(out->begin(), out->end(), inv) == out->end()) out->push_back(inv);
  }
}

}  // namespace

std::string WordText(VersionVerdict::Word word) {
  switch (word) {
    case VersionVerdict::Word::kPass:
      return "PASS";
    case VersionVerdict::Word::kFail:
      return "FAIL";
    case VersionVerdict::Word::kError:
      return "ERROR";
  }
  return "?";
}

std::string InvariantNames(const std::vector<check::Invariant>& invariants) {
  std::string out;
  for (const check::Invariant inv : invariants) {
    if (!out.empty()) out += ",";
    out += check::InvariantName(inv);
  }
  return out;
}

VersionVerdict JudgeVersion(const std::string& sut_path, const JudgeSettings& settings) {
  VersionVerdict verdict;
  SutFlags flags = settings.flags;
  flags.sut = settings.engine + ":" + sut_path;
  std::shared_ptr<sut::Producer> engine;
  std::optional<Case> first;  // the first failing case that fails
  try {
    engine = StartEngine(flags, &verdict);
    ForEachVerifyBatch(settings.corpus, settings.cases, settings.seed, /*batch_size=*/256,
                       engine->Domain(), [&](const CaseBatch& batch) {
                         const std::vector<check::CaseResult> results =
                             check::RunCases(batch.cases, *engine);
                         for (size_t i = 0; i < results.size(); ++i) {
                           ++verdict.cases;
                           const CaseOutcome outcome = Classify(results[i], batch.expect_finding);
                           if (outcome == CaseOutcome::kPass || outcome == CaseOutcome::kKnown) {
                             continue;
                           }
                           ++verdict.failing;
                           if (verdict.first_failure.empty()) verdict.first_failure = batch.sources[i];
                           if (outcome == CaseOutcome::kFindingGone) {
                             verdict.finding_gone = true;
                           } else {
                             AddUnexplained(results[i], &verdict.invariants);
                             if (!first) first = batch.cases[i];
                           }
                         }
                       });
  } catch (const sut::ExternalSutError& e) {
    verdict.word = VersionVerdict::Word::kError;
    verdict.error = e.what();
    return verdict;
  } catch (const UsageError& e) {
    verdict.word = VersionVerdict::Word::kError;
    verdict.error = e.what();
    return verdict;
  }
  std::sort(verdict.invariants.begin(), verdict.invariants.end());
  verdict.word = verdict.failing == 0 ? VersionVerdict::Word::kPass : VersionVerdict::Word::kFail;
  if (first) {
    minimize::MinimizeOptions mopts;
    mopts.producer = engine;
    mopts.budget_ms = settings.budget_ms;
    mopts.report_fields = false;  // the line shows the case, not the field report
    const minimize::MinimizeResult result = minimize::Minimize(*first, mopts);
    if (result.input_fails) {
      verdict.minimized = CaseOneLine(result.minimal);
      verdict.minimized_invariants = result.kept;
    } else {
      // It failed in the batch but not alone: say so rather than print it.
      verdict.minimized = CaseOneLine(*first) + " (not minimized: it passes when run alone)";
    }
  }
  return verdict;
}

}  // namespace r3::cli
