#include "r3/case/case_shape.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace r3 {

CaseShape::CaseShape() {
  for (const CaseField& field : CaseFields()) {
    // An optional choice is another engine's layout (case_fields.h).
    const bool other_engine = field.optional && field.kind == FieldKind::kChoice;
    ranges_[static_cast<size_t>(field.id)] = {field.lo, other_engine ? field.lo : field.hi};
  }
}

CaseShape& CaseShape::Set(FieldId id, int64_t lo, int64_t hi) {
  const CaseField& field = Field(id);
  const int64_t new_lo = std::max(lo, field.lo);
  const int64_t new_hi = std::min(hi, field.hi);
  if (new_lo > new_hi) {
    throw std::invalid_argument(std::string(field.name) + ": [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "] is outside the field's limits");
  }
  ranges_[static_cast<size_t>(id)] = {new_lo, new_hi};
  return *this;
}

FieldRange CaseShape::RangeIn(FieldId id, const Case& c, size_t rank) const {
  const FieldRange own = DependentBounds(Field(id), c, rank);
  const FieldRange mine = Range(id);
  const int64_t hi = std::min(mine.hi, own.hi);
  return {std::min(std::max(mine.lo, own.lo), hi), hi};
}

bool CaseShape::Contains(const Case& c) const {
  if (!ValidateCase(c).field.empty()) return false;
  for (const CaseField& field : CaseFields()) {
    const FieldRange r = Range(field.id);
    for (size_t i = 0, n = field.count(c); i < n; ++i) {
      const int64_t v = field.get(c, i);
      if (v < r.lo || v > r.hi) return false;
    }
  }
  return true;
}

void ClampToShape(Case& c, const CaseShape& shape) {
  // A missing padded value starts at 0 and is lifted to its tokens below.
  c.step.padded.resize(c.step.tokens.size(), 0);
  c.config.dp = static_cast<int64_t>(c.step.tokens.size());
  for (FieldId id : FieldsInDependencyOrder()) {
    const CaseField& field = Field(id);
    for (size_t i = 0, n = field.count(c); i < n; ++i) {
      const FieldRange r = shape.RangeIn(id, c, i);
      const int64_t v = field.get(c, i);
      const int64_t clamped = std::min(std::max(v, r.lo), r.hi);
      if (clamped != v) field.set(c, i, clamped);
    }
  }
  if (c.config.sp == SpMode::kOn && !SpPossible(c.config)) c.config.sp = SpMode::kAuto;
}

}  // namespace r3
