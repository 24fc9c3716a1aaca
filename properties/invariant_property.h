// The property bodies: draw a case, run it through the SUT and the model,
// and fail (RC_FAIL) on a violation no known finding explains. The gtest
// properties, the coverage run, the kill matrix and the benchmark all run
// these same bodies; only the producer differs (the host SUT by default, any
// sut::Producer: the GPU suite runs them on the GPU path).
#ifndef R3_PROPERTIES_INVARIANT_PROPERTY_H_
#define R3_PROPERTIES_INVARIANT_PROPERTY_H_

#include <optional>
#include <string>

#include "r3/case/case.h"
#include "r3/check/run_case.h"
#include "r3/check/verdict.h"
#include "r3/sut/producer.h"

namespace r3::props {

// The first violation of `inv` (any invariant when nullopt) in `result` that
// no known finding explains, or nullptr.
const check::Violation* FirstUnexplained(const check::CaseResult& result,
                                         std::optional<check::Invariant> inv);

// The failure text: invariant, rank, captured vs expected, the full verdict,
// and the case in r3case format (ready to save under corpus/regressions/).
std::string FailureReport(const Case& c, const check::CaseResult& result,
                          const check::Violation& v, const sut::Producer& producer);

// Checks one case; RC_FAILs with FailureReport when `inv` (or any invariant)
// is violated and not explained by a known finding.
void CheckCase(const Case& c, std::optional<check::Invariant> inv, sut::Producer& producer);

// Property body: draws a case from GenCase() and checks invariant `inv` for
// every rank.
void InvariantHolds(check::Invariant inv, sut::Producer& producer);

// Property body: every invariant at once; tags the case with its classes.
void AllInvariantsHold(sut::Producer& producer);

// The host SUT the invariant properties check: the default
// (vllm-post-50874, policy pr50874), or what R3_SUT, R3_POLICY and R3_MUTANT
// (comma-separated) name, the same names as r3check's --sut/--policy/
// --mutant. A bad name prints one line naming the variable and exits with
// status 2.
sut::Producer& PropertyProducer();

}  // namespace r3::props

#endif  // R3_PROPERTIES_INVARIANT_PROPERTY_H_
