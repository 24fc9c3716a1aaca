#include "r3/check/run_case.h"

#include <algorithm>
#include <string>
#include <thread>

#include "r3/case/layout_domain.h"
#include "r3/case/parallel_for.h"
#include "r3/case/usable_cores.h"
#include "r3/check/invariants.h"

namespace r3::check {
namespace {

// A wrong value the observation cannot show (a cell outside the captured
// rows, another layer) still fails the case.
void AddDeviceViolation(CaseResult& result) {
  const std::optional<sut::DeviceCheck>& device = result.observation.device;
  if (!device || device->step_wrong_values == 0 || !result.verdict.ok()) return;
  const sut::Mismatch m = device->step_first_mismatch.value_or(sut::Mismatch{});
  Violation v;
  v.invariant = Invariant::kRowsExact;
  v.dp = m.dp;
  v.tp = m.tp;
  v.message = "gpu: " + std::to_string(device->step_wrong_values) +
              " wrong values in the capturer buffer, first at row " + std::to_string(m.row) +
              " layer " + std::to_string(m.layer) + " k " + std::to_string(m.k) + ": got " +
              std::to_string(m.got) + ", expected " + std::to_string(m.expected);
  result.verdict.violations.push_back(std::move(v));
  result.explained.push_back(nullptr);
}

}  // namespace

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
  AddDeviceViolation(result);
  return result;
}

CaseResult RunCase(const Case& c, const sut::SutOptions& options) {
  return JudgeObservation(c, sut::RunSut(c, options));
}

namespace {

// Below this many cases a batch is judged (and freed) on one thread.
constexpr size_t kParallelBatch = 256;

unsigned BatchThreads(size_t cases) { return cases >= kParallelBatch ? UsableCores() : 1; }

}  // namespace

void ReleaseResults(std::vector<CaseResult>& results) {
  ParallelFor(results.size(), BatchThreads(results.size()),
              [&results](size_t i) { results[i] = CaseResult(); });
  results.clear();
}

std::vector<CaseResult> RunCases(std::span<const Case> cases, sut::Producer& producer) {
  // A layout the producer does not model describes none of its deployments.
  const LayoutDomain domain = producer.Domain();
  for (const Case& c : cases) {
    if (const FieldError e = OutsideDomain(domain, c, producer.Id()); !e.field.empty()) {
      throw sut::ExternalSutError("case outside the layouts of " + producer.Label() + ": " +
                                  e.field + ": " + e.message);
    }
  }
  std::vector<sut::Observation> observations = producer.Observe(cases);
  if (observations.size() != cases.size()) {
    throw sut::ExternalSutError(producer.Label() + ": " + std::to_string(observations.size()) +
                                " observations for " + std::to_string(cases.size()) + " cases");
  }
  // Judging is pure per case: a large batch (the GPU path's) is judged on
  // every core, each result in its own slot, so the order never changes.
  std::vector<CaseResult> out(cases.size());
  ParallelFor(cases.size(), BatchThreads(cases.size()), [&](size_t i) {
    out[i] = JudgeObservation(cases[i], std::move(observations[i]));
  });
  return out;
}

}  // namespace r3::check
