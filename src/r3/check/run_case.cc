#include "r3/check/run_case.h"

#include "r3/check/invariants.h"

namespace r3::check {

bool CaseResult::PassesOrKnown() const { return CountUnexplained() == 0; }

int CaseResult::CountUnexplained() const {
  int count = 0;
  for (const KnownFinding* f : explained) count += f == nullptr ? 1 : 0;
  return count;
}

CaseResult JudgeObservation(const Case& c, sut::Observation observation) {
  CaseResult result;
  result.layout = model::BuildLayout(c);
  result.observation = std::move(observation);
  result.verdict = CheckInvariants(c, result.layout, result.observation);
  for (const Violation& v : result.verdict.violations) {
    result.explained.push_back(ExplainViolation(c, result.observation, v));
  }
  return result;
}

CaseResult RunCase(const Case& c, const sut::SutOptions& options) {
  return JudgeObservation(c, sut::RunSut(c, options));
}

std::vector<CaseResult> RunCases(std::span<const Case> cases, const sut::SutOptions& options) {
  std::vector<CaseResult> out;
  out.reserve(cases.size());
  if (options.external) {
    std::vector<sut::Observation> observations = options.external->Run(cases, options);
    for (size_t i = 0; i < cases.size(); ++i) {
      out.push_back(JudgeObservation(cases[i], std::move(observations[i])));
    }
    return out;
  }
  for (const Case& c : cases) out.push_back(RunCase(c, options));
  return out;
}

}  // namespace r3::check
