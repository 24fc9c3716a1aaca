// GenCaseIn, RapidCheck's generator built from the field table: every case
// is valid and inside the shape it was asked for, every end of a range is
// reached, and shrinking ends at the simplest case of the shape.
#include "properties/case_domain_gen.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "r3/case/case_format.h"

namespace r3::props {
namespace {

CaseShape Small() {
  return CaseShape()
      .Set(FieldId::kDp, 1, 4)
      .Set(FieldId::kTp, 1, 4)
      .Set(FieldId::kMaxNumBatchedTokens, 1, 47)
      .Set(FieldId::kNumLayers, 1, 3);
}

RC_GTEST_PROP(CaseDomainGen, CasesAreValidAndInTheirShape, ()) {
  const Case c = *GenCaseIn(Small());
  RC_ASSERT(ValidateCase(c).field == "");
  RC_ASSERT(Small().Contains(c));
  RC_ASSERT(ParseCase(PrintCase(c), "<generated>") == c);
}

RC_GTEST_PROP(CaseDomainGen, NarrowShapesAreKept, ()) {
  const CaseShape shape = Small()
                              .Set(FieldId::kDp, 2, 3)
                              .Set(FieldId::kDispatch, 0, 0)
                              .Set(FieldId::kNumExperts, 256, 32768)
                              .Set(FieldId::kTopK, 2, 5);
  const Case c = *GenCaseIn(shape);
  RC_ASSERT(shape.Contains(c));
  RC_ASSERT(c.config.dispatch == Dispatch::kNaive);
}

RC_GTEST_PROP(CaseDomainGen, ValuesStayInRangeWithBothEnds, (int lo, int width)) {
  const int64_t a = lo % 1000;
  const int64_t b = a + (width < 0 ? -width : width) % 50;
  const int64_t v = *GenInRange(a, b);
  RC_ASSERT(v >= a && v <= b);
}

std::vector<Case> Sample(const CaseShape& shape, int count, uint64_t seed) {
  const rc::Gen<Case> gen = GenCaseIn(shape);
  rc::Random random(seed);
  std::vector<Case> out;
  for (int i = 0; i < count; ++i) out.push_back(gen(random.split(), 100).value());
  return out;
}

TEST(CaseDomainGen, ReachesBothEndsOfEveryRangeAndEveryChoice) {
  const CaseShape shape = Small();
  std::map<FieldId, std::set<int64_t>> seen;
  for (const Case& c : Sample(shape, 3000, 1)) {
    for (const CaseField& field : CaseFields()) {
      for (size_t i = 0; i < field.count(c); ++i) seen[field.id].insert(field.get(c, i));
    }
  }
  for (FieldId id : {FieldId::kDp, FieldId::kTp, FieldId::kMaxNumBatchedTokens, FieldId::kNumLayers,
                     FieldId::kEp, FieldId::kDispatch, FieldId::kSp}) {
    EXPECT_TRUE(seen[id].count(shape.Range(id).lo)) << Field(id).name;
    EXPECT_TRUE(seen[id].count(shape.Range(id).hi)) << Field(id).name;
  }
  EXPECT_TRUE(seen[FieldId::kTokens].count(0));
  EXPECT_TRUE(seen[FieldId::kTokens].count(47));
  EXPECT_TRUE(seen[FieldId::kNumExperts].size() > 100);
  EXPECT_EQ(Sample(shape, 20, 3), Sample(shape, 20, 3));
}

TEST(CaseDomainGen, ShrinksToTheSimplestCaseOfTheShape) {
  const CaseShape shape = Small().Set(FieldId::kDp, 2, 4).Set(FieldId::kNumLayers, 2, 3);
  EXPECT_EQ(PrintCase(SmallestCase(GenCaseIn(shape), /*seed=*/5)),
            "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 1\n"
            "top_k 1\nnum_experts 1\nnum_layers 2\ntokens 0 0\n");
  EXPECT_EQ(PrintCase(SmallestCase(GenCaseIn(CaseShape()), /*seed=*/9)),
            "r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 1\n"
            "top_k 1\nnum_experts 1\nnum_layers 1\ntokens 0\n");
}

TEST(CaseDomainGen, ShowValueOfAConfigNamesEveryConfigField) {
  std::ostringstream out;
  showValue(ParseCase("r3case 1\ndp 2\ntp 2\nep on\ndispatch internal\nsp off\n"
                      "max_num_batched_tokens 8\ntop_k 2\nnum_experts 8\nnum_layers 3\ntokens 1 2\n",
                      "t")
                .config,
            out);
  EXPECT_EQ(out.str(),
            "dp 2, tp 2, ep on, dispatch internal, sp off, max_num_batched_tokens 8, top_k 2, "
            "num_experts 8, num_layers 3");
}

}  // namespace
}  // namespace r3::props
