#include "properties/case_domain_gen.h"

#include <stdexcept>
#include <string>

#include "properties/quiet_listener.h"
#include "r3/case/case_fields.h"
#include "r3/case/case_format.h"

namespace r3 {

void showValue(const Case& c, std::ostream& os) { os << "\n" << PrintCase(c); }

void showValue(const Config& c, std::ostream& os) {
  const Case whole{c, {}};
  const char* separator = "";
  for (const CaseField& field : CaseFields()) {
    if (field.kind == FieldKind::kPerRank) continue;
    if (field.optional && field.get(whole, 0) == field.lo) continue;  // as PrintCase
    os << separator << field.name << ' ' << FieldText(field, whole);
    separator = ", ";
  }
}

void showValue(const Step& s, std::ostream& os) {
  os << "tokens";
  for (int64_t t : s.tokens) os << " " << t;
  os << " / padded";
  for (int64_t n : s.padded) os << " " << n;
}

}  // namespace r3

namespace r3::props {

rc::Gen<int64_t> GenInRange(int64_t lo, int64_t hi) {
  // The pick shrinks toward 0 (lo), and the uniform draw toward lo too.
  return rc::gen::mapcat(rc::gen::inRange(0, 7), [lo, hi](int pick) {
    if (pick == 0) return rc::gen::just(lo);
    if (pick == 1) return rc::gen::just(hi);
    return rc::gen::inRange<int64_t>(lo, hi + 1);
  });
}

rc::Gen<Case> GenCaseIn(const CaseShape& shape) {
  // Full strength whatever RapidCheck's size (as GenCase: the distribution
  // must not change with max_size).
  return rc::gen::resize(100, rc::gen::exec([shape] {
    Case c;
    for (FieldId id : FieldsInDependencyOrder()) {
      const CaseField& field = Field(id);
      for (size_t i = 0, n = field.count(c); i < n; ++i) {
        const FieldRange r = shape.RangeIn(id, c, i);
        field.set(c, i, *GenInRange(r.lo, r.hi));
      }
    }
    ClampToShape(c, shape);  // `sp on` where SP cannot exist becomes auto
    return c;
  }));
}

Case SmallestCase(const rc::Gen<Case>& gen, uint64_t seed) {
  rc::detail::TestParams params;
  params.seed = seed;
  rc::detail::TestMetadata metadata;
  QuietListener quiet;
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [&gen] {
        *gen;
        RC_FAIL("every case fails");
      },
      metadata, params, quiet);
  rc::detail::FailureResult failure;
  if (!result.match(failure)) throw std::logic_error("an always-failing property passed");
  std::string text;
  for (const auto& [type, value] : failure.counterExample) text += value;
  return ParseCase(text, "<counterexample>");  // showValue printed the case text
}

}  // namespace r3::props
