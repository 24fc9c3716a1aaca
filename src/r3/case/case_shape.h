// A shape: the sub-range of each field a producer of cases keeps to (the
// generators stay at DP <= 64, the fuzz mutator at M <= 65536, the GPU tests
// at a few ranks), within the case limits of the field table. Clamping into
// a shape is how a producer repairs an edited case: every field into its
// range and into what the other fields allow, with SP forced on only where
// it can exist.
#ifndef R3_CASE_CASE_SHAPE_H_
#define R3_CASE_CASE_SHAPE_H_

#include <array>
#include <cstdint>

#include "r3/case/case.h"
#include "r3/case/case_fields.h"

namespace r3 {

class CaseShape {
 public:
  // Every field over its whole range (the case limits).
  CaseShape();

  // Narrows one field to [lo, hi] within its limits (per-rank fields: each
  // rank's value). A range that misses the limits is an invalid_argument.
  CaseShape& Set(FieldId id, int64_t lo, int64_t hi);

  FieldRange Range(FieldId id) const { return ranges_[static_cast<size_t>(id)]; }

  // The range left for the field in `c` when the fields before it in
  // dependency order are set: the shape's, narrowed by the field's own
  // `below`/`above` (top_k up to num_experts, tokens up to M). Its hi wins
  // when the two do not meet.
  FieldRange RangeIn(FieldId id, const Case& c, size_t rank = 0) const;

  // `c` is valid and every value lies in this shape's ranges.
  bool Contains(const Case& c) const;

 private:
  std::array<FieldRange, kFieldCount> ranges_;
};

// Brings `c` into `shape` with the least change, field by field in
// dependency order: dp follows the length of `tokens` (ranks past the
// shape's dp are dropped from the end, missing ones copy the last; a
// missing `padded` value is the rank's tokens), each value is clamped into
// RangeIn, and `sp on` becomes `auto` where SP cannot exist. The result is
// valid whenever the shape admits a valid case.
void ClampToShape(Case& c, const CaseShape& shape);

}  // namespace r3

#endif  // R3_CASE_CASE_SHAPE_H_
