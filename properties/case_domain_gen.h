// RapidCheck's side of the case domain (r3/case/case_fields.h): a generator
// built from the field table for any shape, and the printing RapidCheck
// uses for counterexamples. GenCaseIn draws the fields in dependency order,
// each within what the shape and the fields before it allow, with one draw
// in seven at each end of the range (idle ranks, warmup at M, top_k equal
// to num_experts); every draw shrinks toward the low end, so a failure
// shrinks toward DP 1, TP 1, EP off, naive dispatch, sp auto, M 1, no
// tokens. SP is forced on only where it can exist.
//
//   GenCaseIn(CaseShape().Set(FieldId::kDp, 1, 4).Set(FieldId::kTp, 1, 4)
//                        .Set(FieldId::kDispatch, 0, 0))   // naive only
//
// properties/case_gen.h keeps the weighted generator of the property suite
// (step shapes vLLM produces); this one is for tests that need a plain,
// narrowed domain (the GPU tests, the domain's own tests).
#ifndef R3_PROPERTIES_CASE_DOMAIN_GEN_H_
#define R3_PROPERTIES_CASE_DOMAIN_GEN_H_

#include <cstdint>
#include <ostream>

#include <rapidcheck.h>

#include "r3/case/case.h"
#include "r3/case/case_shape.h"

namespace r3 {

// Found by ADL: the r3case text, ready to be saved as a file.
void showValue(const Case& c, std::ostream& os);
// "dp 2, tp 2, ep on, ..." in the table's order.
void showValue(const Config& c, std::ostream& os);
void showValue(const Step& s, std::ostream& os);

}  // namespace r3

namespace r3::props {

// A value in [lo, hi]: lo or hi one draw in seven each, else uniform;
// shrinks toward lo.
rc::Gen<int64_t> GenInRange(int64_t lo, int64_t hi);

// Valid cases within `shape` (a shape that admits none gives its clamp).
rc::Gen<Case> GenCaseIn(const CaseShape& shape);

// Where RapidCheck's shrinking of `gen` ends when every case fails (run
// with `seed`, quietly): the generator's simplest case.
Case SmallestCase(const rc::Gen<Case>& gen, uint64_t seed);

}  // namespace r3::props

#endif  // R3_PROPERTIES_CASE_DOMAIN_GEN_H_
