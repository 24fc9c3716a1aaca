// The one judge: every producer of an Observation (host SUTs, the GPU path)
// is checked here against the model's Layout.
#ifndef R3_CHECK_INVARIANTS_H_
#define R3_CHECK_INVARIANTS_H_

#include "r3/case/case.h"
#include "r3/check/verdict.h"
#include "r3/model/layout.h"
#include "r3/sut/observation.h"

namespace r3::check {

Verdict CheckInvariants(const Case& c, const model::Layout& layout, const sut::Observation& obs);

}  // namespace r3::check

#endif  // R3_CHECK_INVARIANTS_H_
