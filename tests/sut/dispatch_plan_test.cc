// sut::PlanDispatch: the spec's worked examples (section 7), each dispatch
// mutant's effect on the plan, and agreement with the model on sampled cases.
#include "r3/sut/dispatch_plan.h"

#include <gtest/gtest.h>

#include <map>

#include "r3/case/case_format.h"
#include "r3/model/ascend_layout.h"
#include "r3/model/layout.h"
#include "r3/sample/case_sampler.h"
#include "r3/sut/sut.h"
#include "tests/testing/test_case.h"

namespace r3::sut {
namespace {

using ::r3::testing::MakeCase;

TEST(DispatchPlanTest, EagerSpStepGathersTheEpGroupWithPadding) {
  const DispatchPlan plan = PlanDispatch(MakeCase({.tokens = {5, 3}}), {});
  EXPECT_TRUE(plan.sp);
  EXPECT_TRUE(plan.naive);
  EXPECT_EQ(*plan.local_sizes, (std::vector<int64_t>{3, 3, 2, 2}));
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].members, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(plan.groups[0].sizes, (std::vector<int64_t>{3, 3, 2, 2}));
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(DescribeRuns(plan.Routed(i)), "dp0[0..5) pad1 dp1[0..3) pad1");
  }
  // dp0/tp1 holds rows [3, 6) of DP rank 0's 6 SP-padded rows: 3, 4 and a pad.
  const RankDispatch& r = plan.ranks[1];
  EXPECT_EQ(r.held_rows, 6);
  EXPECT_EQ(r.shard_first, 3);
  EXPECT_EQ(r.shard_rows, 3);
  EXPECT_EQ(DescribeRuns(r.local), "dp0[3..5) pad1");
  EXPECT_TRUE(plan.error.empty());
}

TEST(DispatchPlanTest, WithoutSpEachTpIndexGathersItsDpGroup) {
  const DispatchPlan plan = PlanDispatch(MakeCase({.ep = false, .tokens = {5, 3}}), {});
  EXPECT_FALSE(plan.sp);
  EXPECT_EQ(*plan.local_sizes, (std::vector<int64_t>{5, 3}));
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].members, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(plan.groups[1].members, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(plan.ranks[3].group, 1);
  EXPECT_EQ(DescribeRuns(plan.Routed(3)), "dp0[0..5) dp1[0..3)");
}

TEST(DispatchPlanTest, WithoutSpEveryTpRankOwnsItsDpRanksWholeBatchFromRowZero) {
  // The GPU path sends [shard_first, shard_first + shard_rows) of the held
  // rows: without SP that is the DP rank's whole batch on every TP rank.
  const DispatchPlan plan = PlanDispatch(MakeCase({.ep = false, .tokens = {5, 3}}), {});
  ASSERT_EQ(plan.ranks.size(), 4u);
  for (const RankDispatch& r : plan.ranks) {
    const int64_t batch = r.dp == 0 ? 5 : 3;
    EXPECT_EQ(r.held_rows, batch) << "dp" << r.dp << "/tp" << r.tp;
    EXPECT_EQ(r.shard_first, 0) << "dp" << r.dp << "/tp" << r.tp;
    EXPECT_EQ(r.shard_rows, batch) << "dp" << r.dp << "/tp" << r.tp;
  }
}

TEST(DispatchPlanTest, InternalDispatchRoutesEachRanksOwnShard) {
  const DispatchPlan plan =
      PlanDispatch(MakeCase({.dispatch = Dispatch::kInternal, .tokens = {5, 3}}), {});
  EXPECT_TRUE(plan.sp);
  EXPECT_FALSE(plan.naive);
  EXPECT_TRUE(plan.groups.empty());
  EXPECT_EQ(DescribeRuns(plan.Routed(0)), "dp0[0..3)");
  EXPECT_EQ(DescribeRuns(plan.Routed(1)), "dp0[3..5) pad1");
  EXPECT_EQ(DescribeRuns(plan.Routed(3)), "dp1[2..3) pad1");
}

TEST(DispatchPlanTest, OneDpRankHasNoMetadataAndNoGather) {
  const DispatchPlan plan = PlanDispatch(MakeCase({.dp = 1, .tokens = {7}}), {});
  EXPECT_FALSE(plan.sp);
  EXPECT_FALSE(plan.naive);
  EXPECT_FALSE(plan.local_sizes.has_value());
  EXPECT_EQ(DescribeRuns(plan.Routed(1)), "dp0[0..7)");
}

TEST(DispatchPlanTest, SequenceParallelNeedsMoreThanOneTpRank) {
  // vLLM's sequence-parallel MoE splits each DP rank's batch over its TP
  // ranks: with one TP rank there is nothing to split, so no SP (and no
  // ep-sp-shards branch, which only labels the step differently here).
  const DispatchPlan one = PlanDispatch(MakeCase({.tp = 1, .tokens = {5, 3}}), {});
  EXPECT_FALSE(one.sp);
  EXPECT_TRUE(one.naive);
  const DispatchPlan two = PlanDispatch(MakeCase({.tp = 2, .tokens = {5, 3}}), {});
  EXPECT_TRUE(two.sp);
  for (const RankObservation& r :
       RunSut(MakeCase({.tp = 1, .tokens = {5, 3}}), {}).ranks) {
    EXPECT_EQ(r.branch, Branch::kNaiveDp) << "dp" << r.dp << "/tp" << r.tp;
  }
}

TEST(DispatchPlanTest, DispatchMutantsChangeThePlan) {
  const Case eager = MakeCase({.tokens = {5, 3}});
  const DispatchPlan tp_major = PlanDispatch(eager, MutantSet(MutantNamed("tp-major-ep-order")));
  EXPECT_EQ(tp_major.groups[0].members, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(DescribeRuns(tp_major.Routed(0)), "dp0[0..3) dp1[0..2) dp0[3..5) pad1 dp1[2..3) pad1");

  const DispatchPlan dp_group = PlanDispatch(eager, MutantSet(MutantNamed("sp-gather-dp-group")));
  ASSERT_EQ(dp_group.groups.size(), 2u);
  EXPECT_EQ(DescribeRuns(dp_group.Routed(1)), "dp0[3..5) pad1 dp1[2..3) pad1");

  const DispatchPlan floor = PlanDispatch(eager, MutantSet(MutantNamed("floor-shard-size")));
  EXPECT_EQ(*floor.local_sizes, (std::vector<int64_t>{2, 2, 1, 1}));
  EXPECT_EQ(DescribeRuns(floor.Routed(0)), "dp0[0..4) dp1[0..2)");
}

// A dispatch mutant is a catalogue row of kind kDispatch: it carries its
// plan edit, and no row of another kind carries one.
TEST(DispatchPlanTest, DispatchMutantsAreTheCataloguesDispatchRows) {
  size_t listed = 0;
  for (const MutantInfo& m : MutantCatalogue()) {
    EXPECT_EQ(m.plan_edit != nullptr, m.dispatch) << m.name;
    if (!m.dispatch) continue;
    ++listed;
    EXPECT_EQ(m.kind, MutantKind::kDispatch) << m.name;
    EXPECT_FALSE(m.equivalent || m.gpu_only || m.host_capture || m.sizing) << m.name;
    EXPECT_EQ(MutantNamed(m.name), m.id);
  }
  EXPECT_GE(listed, 3u);
  EXPECT_THROW(MutantNamed("no-such-mutant"), std::invalid_argument);
}

// No row is a no-op: on some sampled case its plan hands a rank other rows.
TEST(DispatchPlanTest, EveryDispatchMutantChangesSomeRanksRows) {
  for (const MutantInfo& m : MutantCatalogue()) {
    if (!m.dispatch) continue;
    const MutantSet mutants(m.id);
    sample::CaseSampler sampler(/*seed=*/11);
    bool changed = false;
    for (int n = 0; n < 2000 && !changed; ++n) {
      const Case c = sampler.Next();
      const DispatchPlan plain = PlanDispatch(c, {});
      const DispatchPlan mutated = PlanDispatch(c, mutants);
      for (size_t r = 0; r < plain.ranks.size(); ++r) {
        changed = changed || !(mutated.Routed(r) == plain.Routed(r));
      }
    }
    EXPECT_TRUE(changed) << m.name;
  }
}

// Today's three dispatch mutants are mistakes of SP: floor-shard-size of its
// shards, the other two of its naive all-gather over the EP group. Where
// their mistake cannot happen their plan is the plain one.
TEST(DispatchPlanTest, SpDispatchMutantsLeaveOtherStepsAlone) {
  for (const char* name : {"tp-major-ep-order", "floor-shard-size", "sp-gather-dp-group"}) {
    const bool shards_only = std::string(name) == "floor-shard-size";
    const MutantSet mutants(MutantNamed(name));
    sample::CaseSampler sampler(/*seed=*/13);
    int compared = 0;
    for (int n = 0; n < 3000; ++n) {
      const Case c = sampler.Next();
      const DispatchPlan plain = PlanDispatch(c, {});
      if (plain.sp && (shards_only || plain.naive)) continue;
      ++compared;
      const DispatchPlan mutated = PlanDispatch(c, mutants);
      ASSERT_EQ(mutated.local_sizes, plain.local_sizes) << name << "\n" << PrintCase(c);
      ASSERT_EQ(mutated.groups.size(), plain.groups.size()) << name << "\n" << PrintCase(c);
      for (size_t r = 0; r < plain.ranks.size(); ++r) {
        ASSERT_EQ(mutated.Routed(r), plain.Routed(r)) << name << " rank " << r << "\n"
                                                      << PrintCase(c);
        ASSERT_EQ(mutated.ranks[r].local, plain.ranks[r].local) << name << "\n" << PrintCase(c);
        ASSERT_EQ(mutated.ranks[r].group, plain.ranks[r].group) << name << "\n" << PrintCase(c);
      }
    }
    EXPECT_GT(compared, 500) << name;
  }
}

// Each edit runs in table order on the plan the ones before it left, and a
// gather's sizes follow its members: TP-major order over floor-divided shards.
TEST(DispatchPlanTest, DispatchMutantsCompose) {
  const Case eager = MakeCase({.tokens = {5, 3}});
  MutantSet both(MutantNamed("tp-major-ep-order"));
  both.set(MutantNamed("floor-shard-size"));
  const DispatchPlan plan = PlanDispatch(eager, both);
  EXPECT_EQ(*plan.local_sizes, (std::vector<int64_t>{2, 2, 1, 1}));
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].members, (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(plan.groups[0].sizes, (std::vector<int64_t>{2, 1, 2, 1}));
  EXPECT_EQ(DescribeRuns(plan.Routed(0)), "dp0[0..2) dp1[0..1) dp0[2..4) dp1[1..2)");
  EXPECT_TRUE(plan.error.empty());
  // The DP-group edit replaces the EP group, TP-major order and all.
  both.set(MutantNamed("sp-gather-dp-group"));
  const DispatchPlan dp_groups = PlanDispatch(eager, both);
  ASSERT_EQ(dp_groups.groups.size(), 2u);
  EXPECT_EQ(dp_groups.groups[1].members, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(dp_groups.groups[1].sizes, (std::vector<int64_t>{2, 1}));
}

TEST(DispatchPlanTest, CaptureMutantsLeaveThePlanAlone) {
  const Case eager = MakeCase({.tokens = {5, 3}});
  const DispatchPlan plain = PlanDispatch(eager, {});
  for (const MutantInfo& m : MutantCatalogue()) {
    if (!m.host_capture) continue;
    const DispatchPlan mutated = PlanDispatch(eager, MutantSet(m.id));
    EXPECT_EQ(mutated.local_sizes, plain.local_sizes) << m.name;
    for (size_t i = 0; i < plain.ranks.size(); ++i) {
      EXPECT_EQ(mutated.Routed(i), plain.Routed(i)) << m.name;
    }
  }
}

// The SUT layer's dispatch is written apart from the model; on sampled cases
// both must hand every rank the same rows.
TEST(DispatchPlanTest, RoutedRowsMatchTheModelOnSampledCases) {
  sample::CaseSampler sampler(/*seed=*/7);
  for (int i = 0; i < 3000; ++i) {
    const Case c = sampler.Next();
    const DispatchPlan plan = PlanDispatch(c, {});
    const model::Layout layout = model::BuildLayout(c);
    ASSERT_TRUE(plan.error.empty()) << plan.error;
    ASSERT_EQ(plan.local_sizes, layout.local_sizes) << "case " << i;
    for (size_t r = 0; r < plan.ranks.size(); ++r) {
      ASSERT_EQ(plan.Routed(r), layout.tensors[layout.ranks[r].tensor].runs())
          << "case " << i << " rank " << r;
    }
  }
}

// vllm-ascend's comm types (docs/layouts.md's N = [5, 3], tp 2): the plan's
// own transcription of its prepare step, rank by rank.
TEST(DispatchPlanTest, AscendCommTypesLayTheKernelRowsOutTheirOwnWay) {
  Case c = ParseCase(
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 2\nnum_experts 8\nnum_layers 1\ntokens 5 3\nmoe_comm allgather\n",
      "t");
  DispatchPlan plan = PlanDispatch(c, {});
  EXPECT_FALSE(plan.local_sizes.has_value());
  EXPECT_TRUE(plan.groups.empty());
  const RowRuns gathered = {{0, 0, 5}, {1, 0, 3}, {RowRun::kPad, 0, 2}};
  for (size_t r = 0; r < 4; ++r) EXPECT_EQ(plan.Routed(r), gathered) << r;
  c.config.moe_comm = MoeComm::kAllToAll;  // tensor_split: 5 -> [3, 2], 3 -> [2, 1]
  plan = PlanDispatch(c, {});
  EXPECT_EQ(plan.Routed(0), (RowRuns{{0, 0, 3}}));
  EXPECT_EQ(plan.Routed(1), (RowRuns{{0, 3, 2}}));
  EXPECT_EQ(plan.Routed(2), (RowRuns{{1, 0, 2}}));
  EXPECT_EQ(plan.Routed(3), (RowRuns{{1, 2, 1}}));
  c.config.moe_comm = MoeComm::kMc2;  // chunks of cdiv(5, 2) = 3
  plan = PlanDispatch(c, {});
  EXPECT_EQ(plan.Routed(1), (RowRuns{{0, 3, 2}, {RowRun::kPad, 0, 1}}));
  EXPECT_EQ(plan.Routed(2), (RowRuns{{1, 0, 3}}));
  EXPECT_EQ(plan.Routed(3), (RowRuns{{RowRun::kPad, 0, 3}}));
  c.step.tokens = c.step.padded = {1, 0};
  c.config.moe_comm = MoeComm::kAllToAll;  // fewer rows than tp: padded to tp first
  plan = PlanDispatch(c, {});
  EXPECT_EQ(plan.Routed(1), (RowRuns{{RowRun::kPad, 0, 1}}));
  EXPECT_EQ(plan.Routed(2), (RowRuns{{RowRun::kPad, 0, 1}}));
}

// The plan transcribes vllm-ascend's prepare apart from the model: on every
// rank of sampled vllm-ascend cases the two agree, and no dispatch mutant
// (vLLM's all_gatherv) touches them.
TEST(DispatchPlanTest, AscendPlansAgreeWithTheModelAndIgnoreDispatchMutants) {
  const LayoutDomain ascend{.internal_dispatch = false, .vllm_findings = false,
                            .vllm_dispatch = false, .ascend_comm = true};
  sample::CaseSampler sampler(/*seed=*/21, ascend);
  std::map<MoeComm, int> comms;
  for (int n = 0; n < 3000; ++n) {
    const Case c = sampler.Next();
    ++comms[c.config.moe_comm];
    const DispatchPlan plan = PlanDispatch(c, {});
    const model::AscendComm comm = c.config.moe_comm == MoeComm::kAllToAll ? model::AscendComm::kAllToAll
                                   : c.config.moe_comm == MoeComm::kMc2    ? model::AscendComm::kMc2
                                                                           : model::AscendComm::kAllGather;
    const model::AscendStep step{c.step.padded, c.config.tp, comm};
    for (int64_t d = 0; d < c.config.dp; ++d) {
      for (int64_t t = 0; t < c.config.tp; ++t) {
        const size_t r = static_cast<size_t>(d * c.config.tp + t);
        ASSERT_EQ(plan.Routed(r), model::AscendKernelRows(step, d, t)) << PrintCase(c) << "rank " << r;
        ASSERT_EQ(plan.ranks[r].dp, d);
        ASSERT_EQ(plan.ranks[r].tp, t);
      }
    }
    for (const MutantInfo& m : MutantCatalogue()) {
      if (m.plan_edit == nullptr) continue;
      const DispatchPlan mutated = PlanDispatch(c, MutantSet(m.id));
      for (size_t r = 0; r < plan.ranks.size(); ++r) ASSERT_EQ(mutated.Routed(r), plan.Routed(r)) << m.name;
    }
  }
  EXPECT_EQ(comms.size(), 3u);
  EXPECT_EQ(comms.count(MoeComm::kNone), 0u);
}

}  // namespace
}  // namespace r3::sut
