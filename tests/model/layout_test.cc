// The spec's section 7 worked examples, as the reference model sees them.
#include "r3/model/layout.h"

#include <gtest/gtest.h>

#include "r3/case/case_format.h"
#include "r3/model/sequence_parallel.h"
#include "tests/testing/test_case.h"

namespace r3::model {
namespace {

using ::r3::testing::CaseSpec;
using ::r3::testing::MakeCase;

std::string Seen(const Layout& layout, int64_t dp, int64_t tp, int64_t tp_size) {
  return DescribeRuns(layout.seen_by(layout.rank(dp, tp, tp_size)).runs());
}

TEST(LayoutTest, WarmupGathersAllShardsOfTheEpGroup) {
  const Layout layout = BuildLayout(MakeCase({.tokens = {8192, 8192}}));
  EXPECT_TRUE(layout.sp);
  EXPECT_EQ(layout.group, GatherGroup::kEp);
  EXPECT_EQ(*layout.local_sizes, (std::vector<int64_t>{4096, 4096, 4096, 4096}));
  EXPECT_EQ(layout.kernel_rows, 16384);
}

TEST(LayoutTest, EagerStepHasSpPaddingAtTheTailOfEachShardGroup) {
  const Layout layout = BuildLayout(MakeCase({.tokens = {5, 3}}));
  EXPECT_EQ(*layout.local_sizes, (std::vector<int64_t>{3, 3, 2, 2}));
  // Rows 0-4 DP0 real, 5 DP0 pad, 6-8 DP1 real, 9 DP1 pad.
  for (int64_t d = 0; d < 2; ++d) {
    for (int64_t t = 0; t < 2; ++t) {
      EXPECT_EQ(Seen(layout, d, t, 2), "dp0[0..5) pad1 dp1[0..3) pad1");
      EXPECT_EQ(layout.rank(d, t, 2).n, 10);
    }
  }
  EXPECT_EQ(DescribeRuns(layout.rank(0, 1, 2).expected), "dp0[0..5)");
  EXPECT_EQ(DescribeRuns(layout.rank(1, 0, 2).expected), "dp1[0..3)");
}

TEST(LayoutTest, GraphDecodePutsDp1AtRowTwo) {
  const Layout layout = BuildLayout(MakeCase({.tokens = {1, 1}}));
  EXPECT_EQ(*layout.local_sizes, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(Seen(layout, 0, 0, 2), "dp0[0..1) pad1 dp1[0..1) pad1");
}

TEST(LayoutTest, GraphSizeEightHasNoSpPadding) {
  const Layout layout = BuildLayout(MakeCase({.tokens = {5, 3}, .padded = {8, 8}}));
  EXPECT_EQ(layout.rank(0, 0, 2).n, 16);
  EXPECT_EQ(Seen(layout, 1, 1, 2), "dp0[0..8) dp1[0..8)");
}

TEST(LayoutTest, InternalDispatchWithSpSeesOnlyTheOwnShard) {
  const Layout layout = BuildLayout(MakeCase({.dispatch = Dispatch::kInternal, .tokens = {5, 3}}));
  EXPECT_EQ(layout.group, GatherGroup::kNone);
  EXPECT_EQ(Seen(layout, 0, 0, 2), "dp0[0..3)");
  EXPECT_EQ(Seen(layout, 0, 1, 2), "dp0[3..5) pad1");
  EXPECT_EQ(Seen(layout, 1, 0, 2), "dp1[0..2)");
  EXPECT_EQ(Seen(layout, 1, 1, 2), "dp1[2..3) pad1");
  EXPECT_EQ(layout.rank(0, 0, 2).n, 3);
  EXPECT_EQ(layout.rank(1, 1, 2).n, 2);
}

TEST(LayoutTest, NonSpNaiveGathersTheDpGroup) {
  const Layout layout = BuildLayout(MakeCase({.ep = false, .tokens = {5, 3}}));
  EXPECT_FALSE(layout.sp);
  EXPECT_EQ(layout.group, GatherGroup::kDp);
  EXPECT_EQ(*layout.local_sizes, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(Seen(layout, 1, 0, 2), "dp0[0..5) dp1[0..3)");
  EXPECT_EQ(layout.rank(1, 1, 2).n, 8);
}

TEST(LayoutTest, SingleDpRankHasNoDpMetadataAndNoGather) {
  const Layout layout = BuildLayout(MakeCase({.dp = 1, .tp = 4, .tokens = {6}}));
  EXPECT_FALSE(layout.sp);  // SP needs DP > 1
  EXPECT_FALSE(layout.local_sizes.has_value());
  EXPECT_EQ(layout.group, GatherGroup::kNone);
  EXPECT_EQ(layout.rank(0, 3, 4).n, 6);
}

TEST(LayoutTest, SpForcedOffFallsBackToTheDpGroup) {
  const Layout layout = BuildLayout(MakeCase({.sp = SpMode::kOff, .tokens = {5, 3}}));
  EXPECT_FALSE(layout.sp);
  EXPECT_EQ(layout.group, GatherGroup::kDp);
}

TEST(LayoutTest, ShardsOfAnIdleRankAreEmpty) {
  const Layout layout = BuildLayout(MakeCase({.dp = 3, .tp = 4, .tokens = {9, 0, 2}}));
  EXPECT_EQ(*layout.local_sizes, (std::vector<int64_t>{3, 3, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(Seen(layout, 2, 3, 4),
            "dp0[0..9) pad3 dp2[0..2) pad2");
}

TEST(LayoutTest, SpShardCoversRowsInOrderWithPaddingLast) {
  for (int64_t n = 0; n <= 20; ++n) {
    for (int64_t tp = 1; tp <= 6; ++tp) {
      RowRuns joined;
      for (int64_t t = 0; t < tp; ++t) AppendRuns(joined, SpShard(/*dp=*/0, t, n, tp));
      RowRuns expected;
      AppendRun(expected, {0, 0, n});
      AppendRun(expected, {RowRun::kPad, 0, ShardRows(n, tp) * tp - n});
      EXPECT_EQ(joined, expected) << "n=" << n << " tp=" << tp;
    }
  }
}

// vLLM's rule: MoE sequence parallelism needs EP, TP > 1 and DP > 1, and
// "off" wins; "on" and "auto" agree wherever both are legal.
TEST(SequenceParallelTest, SpNeedsEpAndTpAboveOneAndDpAboveOne) {
  Config config = MakeCase({.tokens = {1, 1}}).config;  // ep on, tp 2, dp 2
  for (SpMode mode : {SpMode::kAuto, SpMode::kOn}) {
    config.sp = mode;
    EXPECT_TRUE(SpEnabled(config));
    Config tp1 = config;
    tp1.tp = 1;
    EXPECT_FALSE(SpEnabled(tp1));
    Config dp1 = config;
    dp1.dp = 1;
    EXPECT_FALSE(SpEnabled(dp1));
    Config no_ep = config;
    no_ep.ep = false;
    EXPECT_FALSE(SpEnabled(no_ep));
  }
  config.sp = SpMode::kOff;
  EXPECT_FALSE(SpEnabled(config));
}

TEST(SequenceParallelTest, LocalSizesWithoutSpAreThePaddedSizes) {
  const Case c = MakeCase({.tp = 1, .tokens = {5, 3}});
  EXPECT_EQ(*LocalSizes(c), (std::vector<int64_t>{5, 3}));
}

// A vllm-ascend comm type lays the kernel's rows out by ascend_layout.h,
// gathers nothing with all_gatherv (no local_sizes), and still wants each
// DP rank's own N[d] rows.
TEST(LayoutTest, AscendCommTypesTakeTheirKernelRowsFromTheAscendLayout) {
  Case c = ParseCase(
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 2\nnum_experts 8\nnum_layers 1\ntokens 5 3\nmoe_comm mc2\n",
      "t");
  const Layout mc2 = BuildLayout(c);
  EXPECT_FALSE(mc2.local_sizes.has_value());
  EXPECT_EQ(mc2.group, GatherGroup::kNone);
  ASSERT_EQ(mc2.ranks.size(), 4u);
  EXPECT_EQ(mc2.seen_by(mc2.rank(1, 1, 2)).runs(), (RowRuns{{RowRun::kPad, 0, 3}}));
  EXPECT_EQ(mc2.rank(1, 1, 2).n, 3);
  EXPECT_EQ(mc2.rank(1, 1, 2).expected, (RowRuns{{1, 0, 3}}));
  EXPECT_EQ(mc2.kernel_rows, 3);
  c.config.moe_comm = MoeComm::kAllGather;
  const Layout gathered = BuildLayout(c);
  EXPECT_EQ(gathered.group, GatherGroup::kDp);
  EXPECT_EQ(gathered.tensors.size(), 1u);  // every rank sees the one padded gather
  EXPECT_EQ(gathered.rank(0, 0, 2).n, 10);
  EXPECT_EQ(gathered.kernel_rows, 10);
  for (int64_t d = 0; d < 2; ++d) {
    for (int64_t t = 0; t < 2; ++t) {
      EXPECT_EQ(gathered.rank(d, t, 2).dp, d);
      EXPECT_EQ(gathered.rank(d, t, 2).tp, t);
    }
  }
  // Ranks that see the same rows share a tensor, the latest one.
  c.config.moe_comm = MoeComm::kMc2;
  c.step.tokens = c.step.padded = {5, 0};
  const Layout idle = BuildLayout(c);
  EXPECT_EQ(idle.seen_by(idle.rank(1, 0, 2)).runs(), (RowRuns{{RowRun::kPad, 0, 3}}));
  EXPECT_EQ(idle.seen_by(idle.rank(1, 1, 2)).runs(), (RowRuns{{RowRun::kPad, 0, 3}}));
  EXPECT_EQ(idle.tensors.size(), 3u);
  // One DP rank gathers nothing.
  c.config.dp = 1;
  c.step.tokens = c.step.padded = {5};
  c.config.moe_comm = MoeComm::kAllGather;
  EXPECT_EQ(BuildLayout(c).group, GatherGroup::kNone);
}

}  // namespace
}  // namespace r3::model
