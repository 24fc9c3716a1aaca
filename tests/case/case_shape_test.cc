// Shapes narrow the case domain for a producer; ClampToShape is the one
// repair every producer uses (the fuzz mutator, RapidCheck's GenCaseIn).
#include "r3/case/case_shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/case/limits.h"

namespace r3 {
namespace {

Case Valid() {
  return ParseCase(
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp on\nmax_num_batched_tokens 16\n"
      "top_k 4\nnum_experts 8\nnum_layers 2\ntokens 5 3\npadded 8 3\n",
      "valid");
}

// ... but an optional choice (moe_comm: another engine's layouts), which
// stays at its first value unless a shape asks for it.
TEST(CaseShapeTest, TheDefaultShapeIsTheCaseLimits) {
  const CaseShape shape;
  for (const CaseField& field : CaseFields()) {
    const bool other_engine = field.optional && field.kind == FieldKind::kChoice;
    EXPECT_EQ(shape.Range(field.id).lo, field.lo) << field.name;
    EXPECT_EQ(shape.Range(field.id).hi, other_engine ? field.lo : field.hi) << field.name;
  }
  EXPECT_EQ(shape.Range(FieldId::kMoeComm).hi, 0);
  EXPECT_TRUE(shape.Contains(Valid()));
}

TEST(CaseShapeTest, SetNarrowsWithinTheLimitsAndRefusesARangeOutsideThem) {
  CaseShape shape;
  shape.Set(FieldId::kDp, 2, 4).Set(FieldId::kTp, -5, 3).Set(FieldId::kNumExperts, 8, kMaxExperts + 9);
  EXPECT_EQ(shape.Range(FieldId::kDp).lo, 2);
  EXPECT_EQ(shape.Range(FieldId::kDp).hi, 4);
  EXPECT_EQ(shape.Range(FieldId::kTp).lo, 1);
  EXPECT_EQ(shape.Range(FieldId::kTp).hi, 3);
  EXPECT_EQ(shape.Range(FieldId::kNumExperts).hi, kMaxExperts);
  EXPECT_THROW(shape.Set(FieldId::kTp, kMaxTp + 1, kMaxTp + 5), std::invalid_argument);
  EXPECT_THROW(shape.Set(FieldId::kDp, 5, 4), std::invalid_argument);
  EXPECT_NO_THROW(shape.Set(FieldId::kDp, 4, 4));
}

TEST(CaseShapeTest, ContainsNeedsAValidCaseWithEveryValueInRange) {
  const Case c = Valid();
  EXPECT_TRUE(CaseShape().Set(FieldId::kTp, 2, 2).Contains(c));
  EXPECT_FALSE(CaseShape().Set(FieldId::kTp, 3, 8).Contains(c));
  EXPECT_FALSE(CaseShape().Set(FieldId::kTp, 1, 1).Contains(c));
  EXPECT_FALSE(CaseShape().Set(FieldId::kPadded, 0, 7).Contains(c));    // rank 0's 8
  EXPECT_TRUE(CaseShape().Set(FieldId::kPadded, 3, 8).Contains(c));
  EXPECT_FALSE(CaseShape().Set(FieldId::kTokens, 4, 16).Contains(c));   // rank 1's 3
  EXPECT_FALSE(CaseShape().Set(FieldId::kDispatch, 1, 1).Contains(c));  // naive only
  Case invalid = c;
  invalid.config.top_k = 9;
  EXPECT_FALSE(CaseShape().Contains(invalid));
}

TEST(CaseShapeTest, RangeInIsTheShapesWithinWhatEarlierFieldsAllow) {
  const Case c = Valid();
  const CaseShape shape = CaseShape().Set(FieldId::kTopK, 2, 6).Set(FieldId::kTokens, 1, 12);
  EXPECT_EQ(shape.RangeIn(FieldId::kTopK, c).lo, 2);
  EXPECT_EQ(shape.RangeIn(FieldId::kTopK, c).hi, 6);
  Case few = c;
  few.config.num_experts = 3;
  EXPECT_EQ(shape.RangeIn(FieldId::kTopK, few).hi, 3);
  few.config.num_experts = 1;  // below the shape's lo: its hi wins
  EXPECT_EQ(shape.RangeIn(FieldId::kTopK, few).lo, 1);
  EXPECT_EQ(shape.RangeIn(FieldId::kTopK, few).hi, 1);
  EXPECT_EQ(shape.RangeIn(FieldId::kTokens, c, 0).hi, 12);
  EXPECT_EQ(shape.RangeIn(FieldId::kPadded, c, 0).lo, 5);   // tokens[0]
  EXPECT_EQ(shape.RangeIn(FieldId::kPadded, c).lo, 5);      // rank 0 by default
  EXPECT_EQ(shape.RangeIn(FieldId::kPadded, c, 1).hi, 16);  // M
  // M's own range ignores the counts: they follow M, not the other way.
  EXPECT_EQ(shape.RangeIn(FieldId::kMaxNumBatchedTokens, c).lo, 1);
}

TEST(CaseShapeTest, ClampRepairsEachKindOfOffence) {
  Case c = Valid();
  c.config.top_k = 20;                 // above num_experts
  c.config.num_experts = kMaxExperts + 3;
  c.config.num_layers = 0;
  c.config.max_num_batched_tokens = 4;  // below the counts
  c.step.tokens = {5, 3, 9};            // dp follows the step
  c.step.padded = {8, 1};               // rank 2 missing; rank 1 below its tokens
  c.config.tp = 99;
  ClampToShape(c, CaseShape().Set(FieldId::kTp, 1, 16));
  EXPECT_EQ(c.config.dp, 3);
  EXPECT_EQ(c.config.tp, 16);
  EXPECT_EQ(c.config.num_experts, kMaxExperts);
  EXPECT_EQ(c.config.top_k, 20);
  EXPECT_EQ(c.config.num_layers, 1);
  EXPECT_EQ(c.config.max_num_batched_tokens, 4);
  EXPECT_EQ(c.step.tokens, (std::vector<int64_t>{4, 3, 4}));
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{4, 3, 4}));
  EXPECT_EQ(ValidateCase(c).field, "");

  Case k = Valid();
  k.config.top_k = 9;  // one above num_experts 8
  ClampToShape(k, CaseShape());
  EXPECT_EQ(k.config.top_k, 8);
}

TEST(CaseShapeTest, ClampDropsRanksFromTheEndAndFillsMissingOnesFromTheLast) {
  Case c = Valid();
  c.step.tokens = {1, 2, 3, 4};
  c.step.padded = {1, 2, 3, 4};
  ClampToShape(c, CaseShape().Set(FieldId::kDp, 1, 2));
  EXPECT_EQ(c.config.dp, 2);
  EXPECT_EQ(c.step.tokens, (std::vector<int64_t>{1, 2}));
  c.step.tokens = {2, 1};
  c.step.padded = {3, 4, 5};  // one value too many: it goes
  ClampToShape(c, CaseShape());
  EXPECT_EQ(c.config.dp, 2);
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{3, 4}));
  c.step.tokens = {0, 2};
  c.step.padded = {};  // missing: each rank's tokens, an idle rank's 0
  ClampToShape(c, CaseShape());
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{0, 2}));
  c.step.tokens = {6};
  c.step.padded = {7};
  ClampToShape(c, CaseShape().Set(FieldId::kDp, 3, 4));
  EXPECT_EQ(c.step.tokens, (std::vector<int64_t>{6, 6, 6}));
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{7, 7, 7}));
}

TEST(CaseShapeTest, ClampTurnsSpOnIntoAutoExactlyWhereSpCannotExist) {
  for (bool ep : {false, true}) {
    for (int64_t tp : {1, 2}) {
      for (int64_t dp : {1, 2}) {
        Case c = Valid();
        c.config.ep = ep;
        c.config.tp = tp;
        c.step.tokens.resize(static_cast<size_t>(dp));
        c.step.padded.resize(static_cast<size_t>(dp));
        ClampToShape(c, CaseShape());
        EXPECT_EQ(c.config.sp, SpPossible(c.config) ? SpMode::kOn : SpMode::kAuto);
        EXPECT_EQ(ValidateCase(c).field, "");
      }
    }
  }
  Case off = Valid();
  off.config.sp = SpMode::kOff;
  off.config.ep = false;
  ClampToShape(off, CaseShape());
  EXPECT_EQ(off.config.sp, SpMode::kOff);
  Case naive = Valid();
  naive.config.dispatch = Dispatch::kInternal;
  ClampToShape(naive, CaseShape().Set(FieldId::kDispatch, 0, 0));
  EXPECT_EQ(naive.config.dispatch, Dispatch::kNaive);
}

// Whatever the edit, the clamp gives a valid case in the shape, and clamping
// again changes nothing.
TEST(CaseShapeTest, ClampOfArbitraryValuesIsValidContainedAndIdempotent) {
  const CaseShape shape = CaseShape()
                              .Set(FieldId::kDp, 1, 8)
                              .Set(FieldId::kTp, 1, 8)
                              .Set(FieldId::kMaxNumBatchedTokens, 1, 300)
                              .Set(FieldId::kNumLayers, 2, 4);
  uint64_t state = 12345;
  auto next = [&state](int64_t lo, int64_t hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(hi - lo + 1));
  };
  for (int i = 0; i < 2000; ++i) {
    Case c;
    c.config.tp = next(-3, 70);
    c.config.ep = next(0, 1) == 1;
    c.config.dispatch = static_cast<Dispatch>(next(0, 1));
    c.config.sp = static_cast<SpMode>(next(0, 2));
    c.config.max_num_batched_tokens = next(-5, 1000);
    c.config.top_k = next(-2, 300);
    c.config.num_experts = next(-2, 300);
    c.config.num_layers = next(-2, 9);
    const int64_t dp = next(0, 12);
    for (int64_t d = 0; d < dp; ++d) c.step.tokens.push_back(next(-5, 400));
    for (int64_t d = next(0, dp); d > 0; --d) c.step.padded.push_back(next(-5, 400));
    ClampToShape(c, shape);
    ASSERT_TRUE(shape.Contains(c)) << PrintCase(c) << ValidateCase(c).field;
    Case again = c;
    ClampToShape(again, shape);
    ASSERT_EQ(again, c);
  }
}

}  // namespace
}  // namespace r3
