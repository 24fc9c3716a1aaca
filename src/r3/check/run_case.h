// One case through the whole flow: model, SUT, invariants, known findings.
#ifndef R3_CHECK_RUN_CASE_H_
#define R3_CHECK_RUN_CASE_H_

#include <span>
#include <vector>

#include "r3/case/case.h"
#include "r3/check/known_findings.h"
#include "r3/check/verdict.h"
#include "r3/model/layout.h"
#include "r3/sut/observation.h"
#include "r3/sut/producer.h"
#include "r3/sut/sut.h"

namespace r3::check {

struct CaseResult {
  model::Layout layout;
  sut::Observation observation;
  Verdict verdict;
  // explained[i]: the known finding behind verdict.violations[i], or nullptr.
  std::vector<const KnownFinding*> explained;

  // No violation that a known finding does not explain.
  bool PassesOrKnown() const;
  int CountUnexplained() const;
};

// One case through the built-in host SUT (RunSut).
CaseResult RunCase(const Case& c, const sut::SutOptions& options);

// Many cases at once through any producer, which gets them as one batch: an
// engine's process boundary (or a GPU launch) is crossed once, not once per
// case.
std::vector<CaseResult> RunCases(std::span<const Case> cases, sut::Producer& producer);

// Frees a batch of results on every core, as RunCases judged them: each
// holds a layout, an observation and a verdict of many small blocks, and a
// GPU batch of thousands takes longer to free on one thread than to judge.
// `results` is empty afterwards.
void ReleaseResults(std::vector<CaseResult>& results);

// Judges one observation: model, invariants, known findings. A device's wrong
// values that no violation shows still fail the case (rows-exact).
CaseResult JudgeObservation(const Case& c, sut::Observation observation);

}  // namespace r3::check

#endif  // R3_CHECK_RUN_CASE_H_
