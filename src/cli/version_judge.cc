#include "cli/version_judge.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli/case_one_line.h"
#include "r3/check/run_case.h"
#include "r3/engine/engine_sut.h"
#include "r3/minimize/minimize.h"
#include "r3/sut/external_sut.h"

namespace r3::cli {
namespace {

// The engine layer prints the adapter's hello on stderr, one line:
//   r3check: engine vllm: vllm capture from SOURCE (sha256 H, version V,
//   INTERFACE, DEVICE xN, collectives B)
// and exposes it no other way; the sweep reads it from there (and keeps it
// off the terminal: its table shows it). Other lines pass through.
void ReadHello(const std::string& captured, VersionVerdict* verdict) {
  std::istringstream lines(captured);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t open = line.rfind(" (sha256 ");
    const size_t version = open == std::string::npos ? open : line.find(", version ", open);
    const size_t collectives = line.rfind(", collectives ");
    const size_t device = collectives == std::string::npos || collectives == 0
                              ? std::string::npos
                              : line.rfind(", ", collectives - 1);
    if (!line.starts_with("r3check: engine ") || version == std::string::npos ||
        device == std::string::npos || device <= version) {
      std::cerr << line << "\n";
      continue;
    }
    const size_t v = version + std::string_view(", version ").size();
    const size_t v_end = line.find(", ", v);
    if (v_end == std::string::npos || v_end >= device) {
      std::cerr << line << "\n";
      continue;
    }
    verdict->engine_version = line.substr(v, v_end - v);
    verdict->interface = line.substr(v_end + 2, device - v_end - 2);
  }
}

// Starts the engine with stderr captured for ReadHello.
sut::SutOptions StartEngine(const SutFlags& flags, VersionVerdict* verdict) {
  std::ostringstream captured;
  std::streambuf* const saved = std::cerr.rdbuf(captured.rdbuf());
  struct Restore {
    std::streambuf* saved;
    ~Restore() { std::cerr.rdbuf(saved); }
  };
  sut::SutOptions options;
  {
    Restore restore{saved};
    options = flags.Resolve();
  }
  ReadHello(captured.str(), verdict);
  return options;
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
  flags.sut = "vllm:" + sut_path;
  sut::SutOptions options;
  std::optional<Case> first;  // the first failing case that fails
  try {
    options = StartEngine(flags, &verdict);
    ForEachVerifyBatch(settings.corpus, settings.cases, settings.seed, /*batch_size=*/256,
                       [&](const CaseBatch& batch) {
                         const std::vector<check::CaseResult> results =
                             check::RunCases(batch.cases, options);
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
    mopts.sut = options;
    mopts.budget_ms = settings.budget_ms;
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
