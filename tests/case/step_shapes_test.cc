// The step shapes every producer of cases builds with.
#include "r3/case/step_shapes.h"

#include <gtest/gtest.h>

#include <vector>

namespace r3 {
namespace {

using V = std::vector<int64_t>;

TEST(StepShapesTest, EachShapeHasItsCounts) {
  EXPECT_EQ(EagerStep({3, 0, 5}), (Step{V{3, 0, 5}, V{3, 0, 5}}));
  EXPECT_EQ(UniformStep({3, 0, 5}, 8), (Step{V{3, 0, 5}, V{8, 8, 8}}));
  EXPECT_EQ(UniformStep({1, 0}, 1), (Step{V{1, 0}, V{1, 1}}));
  EXPECT_EQ(WarmupStep(3, 7), (Step{V{7, 7, 7}, V{7, 7, 7}}));
  EXPECT_EQ(LoneTokenStep(3, 2), (Step{V{0, 0, 1}, V{0, 0, 1}}));
  EXPECT_EQ(LoneTokenStep(1, 0), (Step{V{1}, V{1}}));
}

Case WithStep(Step s) {
  Case c;
  c.config.dp = static_cast<int64_t>(s.tokens.size());
  c.step = std::move(s);
  return c;
}

TEST(StepShapesTest, ALoneTokenIsOneRankWithOneTokenAndTheOthersIdle) {
  EXPECT_TRUE(IsLoneToken(WithStep(LoneTokenStep(2, 0))));
  EXPECT_TRUE(IsLoneToken(WithStep(LoneTokenStep(5, 4))));
  EXPECT_FALSE(IsLoneToken(WithStep(LoneTokenStep(1, 0))));           // DP 1
  EXPECT_FALSE(IsLoneToken(WithStep(UniformStep({1, 0}, 1))));        // padded dummy row
  EXPECT_FALSE(IsLoneToken(WithStep(EagerStep({1, 1}))));             // two tokens
  EXPECT_FALSE(IsLoneToken(WithStep(EagerStep({2, 0}))));             // two on one rank
  EXPECT_FALSE(IsLoneToken(WithStep(EagerStep({0, 0}))));             // none
  EXPECT_FALSE(IsLoneToken(WithStep(EagerStep({1, 0, 2}))));          // a busy rank
}

TEST(StepShapesTest, CaptureSizesAreVllmsDefaults) {
  EXPECT_EQ(CaptureSizesUpTo(0), V{});
  EXPECT_EQ(CaptureSizesUpTo(1), V{1});
  EXPECT_EQ(CaptureSizesUpTo(20), (V{1, 2, 4, 8, 16}));
  const V all = CaptureSizesUpTo(1 << 20);
  EXPECT_EQ(all.size(), 3u + 32u + 16u);  // 1 2 4 | 8..256 by 8 | 272..512 by 16
  EXPECT_EQ(all[4], 16);
  EXPECT_EQ(all[34], 256);
  EXPECT_EQ(all[35], 272);
  EXPECT_EQ(all.back(), 512);
  EXPECT_EQ(CaptureSizeFor(0, 64), 1);
  EXPECT_EQ(CaptureSizeFor(3, 64), 4);
  EXPECT_EQ(CaptureSizeFor(9, 64), 16);
  EXPECT_EQ(CaptureSizeFor(64, 64), 64);
  EXPECT_EQ(CaptureSizeFor(65, 64), std::nullopt);
  EXPECT_EQ(CaptureSizeFor(513, 1 << 20), std::nullopt);
}

}  // namespace
}  // namespace r3
