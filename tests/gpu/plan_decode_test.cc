// The GPU path's host side, without a GPU: the plan of collectives and
// slices, and the decoder that turns capturer buffers back into rows. Runs
// in CPU-only CI (no exit 77).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/fill.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/plan.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/sut.h"

namespace r3::gpu {
namespace {

Case SpecEager() {
  return LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/tp2-dp2-eager.r3case");
}

Case Dp2Ragged(int64_t layers) {
  return ParseCase("r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\n"
                   "max_num_batched_tokens 64\ntop_k 4\nnum_experts 256\nnum_layers " +
                       std::to_string(layers) + "\ntokens 5 3\n",
                   "test");
}

Plan PlanFor(const Case& c, sut::MutantSet mutants = {}) {
  const sut::Observation host = sut::RunSut(c, {.mutants = mutants});
  return BuildPlan(c, host, mutants, CaseSeed(c));
}

TEST(PlanTest, SpecExampleGathersTheEpGroupRaggedInRankOrder) {
  const Plan plan = PlanFor(SpecEager());
  ASSERT_EQ(plan.gathers.size(), 1u);
  const GatherPlan& g = plan.gathers[0];
  EXPECT_EQ(g.members, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(g.sizes, (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(g.offsets, (std::vector<int64_t>{0, 3, 6, 8}));
  EXPECT_FALSE(g.equal_sizes);  // grouped broadcasts, as vLLM's all_gatherv
  for (const RankPlan& r : plan.ranks) EXPECT_EQ(r.n, 10);
  // DP0 keeps [0, 5), DP1 [6, 9): spec section 7.
  EXPECT_EQ(plan.ranks[0].capture_start, 0);
  EXPECT_EQ(plan.ranks[0].capture_end, 5);
  EXPECT_EQ(plan.ranks[2].capture_start, 6);
  EXPECT_EQ(plan.ranks[2].capture_end, 9);
  // SP shards: DP0 holds 5 real rows padded to 6, TP1 keeps rows [3, 6).
  EXPECT_EQ(plan.ranks[1].full_rows, 6);
  EXPECT_EQ(plan.ranks[1].real_rows, 5);
  EXPECT_EQ(plan.ranks[1].local_first, 3);
}

TEST(PlanTest, ReversedGatherMutantLaysMembersOutLastToFirst) {
  const Plan plan = PlanFor(SpecEager(), sut::MutantSet(sut::Mutant::kGpuGatherReversed));
  EXPECT_EQ(plan.gathers[0].offsets, (std::vector<int64_t>{7, 4, 2, 0}));
}

// The GPU plan takes its dispatch from sut::PlanDispatch: every dispatch
// mutant of the SUT layer shapes the GPU's collectives the same way.
TEST(PlanTest, EveryDispatchMutantReachesTheGpuCollectives) {
  const Case eager = SpecEager();
  for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
    if (m.host_capture || m.gpu_only) continue;
    const sut::MutantSet mutants(m.id);
    const sut::DispatchPlan dispatch = sut::PlanDispatch(eager, mutants);
    const Plan plan = PlanFor(eager, mutants);
    ASSERT_EQ(plan.gathers.size(), dispatch.groups.size()) << m.name;
    for (size_t g = 0; g < dispatch.groups.size(); ++g) {
      EXPECT_EQ(std::vector<int64_t>(plan.gathers[g].members.begin(), plan.gathers[g].members.end()),
                dispatch.groups[g].members) << m.name;
      EXPECT_EQ(plan.gathers[g].sizes, dispatch.groups[g].sizes) << m.name;
    }
    for (size_t r = 0; r < plan.ranks.size(); ++r) {
      EXPECT_EQ(plan.ranks[r].local_rows, dispatch.ranks[r].shard_rows) << m.name;
      EXPECT_EQ(plan.ranks[r].n, TotalRows(dispatch.Routed(r))) << m.name;
    }
  }
  // And they differ from the plain plan where the mutant changes dispatch.
  const Plan tp_major = PlanFor(eager, sut::MutantSet(sut::Mutant::kTpMajorEpOrder));
  EXPECT_EQ(tp_major.gathers[0].members, (std::vector<int>{0, 2, 1, 3}));
  const Plan floor = PlanFor(eager, sut::MutantSet(sut::Mutant::kFloorShardSize));
  EXPECT_EQ(floor.gathers[0].sizes, (std::vector<int64_t>{2, 2, 1, 1}));
}

TEST(PlanTest, EqualSizesUseAllGather) {
  const Case c = ParseCase(
      "r3case 1\ndp 2\ntp 1\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 4\nnum_experts 256\nnum_layers 2\ntokens 5 3\npadded 8 8\n",
      "test");
  const Plan plan = PlanFor(c);
  ASSERT_EQ(plan.gathers.size(), 1u);
  EXPECT_TRUE(plan.gathers[0].equal_sizes);
  EXPECT_EQ(plan.gathers[0].total, 16);
}

TEST(PlanTest, InternalSpDispatchGathersOverTheTpGroup) {
  const Case c =
      LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/tp2-dp2-internal-sp.r3case");
  const Plan plan = PlanFor(c);
  EXPECT_TRUE(plan.gathers.empty());
  ASSERT_FALSE(plan.tp_gathers.empty());
  for (const GatherPlan& g : plan.tp_gathers) EXPECT_EQ(g.members.size(), 2u);
}

// What a correct capture leaves in each rank's capturer read-back.
std::vector<std::vector<int32_t>> CorrectReadback(const Case& c, const Plan& plan,
                                                  uint64_t seed) {
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankPlan& r = plan.ranks[i];
    const int64_t rows = ReadbackRows(plan, c, i);
    std::vector<int32_t> buf(static_cast<size_t>(rows * plan.num_layers * plan.top_k),
                             kUnwritten);
    for (int64_t row = 0; row < c.step.padded[static_cast<size_t>(r.dp)]; ++row) {
      for (int64_t k = 0; k < plan.top_k; ++k) {
        buf[static_cast<size_t>((row * plan.num_layers + plan.layer) * plan.top_k + k)] =
            FillValue(seed, r.dp, row, k, plan.id_space);
      }
    }
    out.push_back(std::move(buf));
  }
  return out;
}

std::vector<Readback> View(const std::vector<std::vector<int32_t>>& bufs, const Case& c,
                           const Plan& plan) {
  std::vector<Readback> view;
  for (size_t i = 0; i < bufs.size(); ++i) {
    view.push_back({bufs[i].data(), ReadbackRows(plan, c, i)});
  }
  return view;
}

TEST(DecodeTest, CorrectBuffersDecodeToTheHostRows) {
  const Case c = Dp2Ragged(/*layers=*/3);
  const uint64_t seed = CaseSeed(c);
  const sut::Observation host = sut::RunSut(c, {});
  const Plan plan = BuildPlan(c, host, {}, seed);
  const auto bufs = CorrectReadback(c, plan, seed);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.wrong_values, 0);
  EXPECT_GT(d.values_checked, 0);
  for (size_t i = 0; i < plan.ranks.size(); ++i) EXPECT_EQ(d.captured[i], host.ranks[i].captured);
}

TEST(DecodeTest, WrongRowsPoisonAndStrayWritesAreSeen) {
  const Case c = Dp2Ragged(/*layers=*/3);
  const uint64_t seed = CaseSeed(c);
  const sut::Observation host = sut::RunSut(c, {});
  const Plan plan = BuildPlan(c, host, {}, seed);
  auto bufs = CorrectReadback(c, plan, seed);
  const int64_t k = plan.top_k;
  const int64_t layers = plan.num_layers;
  // DP1's row 0 holds DP0's row 2 instead: decoded as that row.
  for (int64_t j = 0; j < k; ++j) {
    bufs[1][static_cast<size_t>(plan.layer * k + j)] =
        FillValue(seed, /*dp=*/0, /*token=*/2, j, plan.id_space);
  }
  // DP0's row 1 is SP padding (poison): decoded as a pad row.
  for (int64_t j = 0; j < k; ++j) {
    bufs[0][static_cast<size_t>((layers + plan.layer) * k + j)] = kPoison;
  }
  // A stray write into another layer of DP0's row 4: only a wrong value.
  bufs[0][static_cast<size_t>((4 * layers + (plan.layer + 1) % layers) * k)] = 7;
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.captured[1], (RowRuns{{0, 2, 1}, {1, 1, 2}}));
  EXPECT_EQ(d.captured[0], (RowRuns{{0, 0, 1}, {RowRun::kPad, 0, 1}, {0, 2, 3}}));
  EXPECT_EQ(d.wrong_values, 2 * k + 1);
  ASSERT_TRUE(d.first_mismatch.has_value());
  EXPECT_EQ(d.first_mismatch->dp, 0);
  EXPECT_EQ(d.first_mismatch->row, 1);
  EXPECT_EQ(d.first_mismatch->got, kPoison);
}

std::vector<int64_t> ReadbackRowsOf(const Case& c, const Plan& plan) {
  std::vector<int64_t> rows;
  for (size_t i = 0; i < plan.ranks.size(); ++i) rows.push_back(ReadbackRows(plan, c, i));
  return rows;
}

std::vector<Case> SeedCases() {
  std::vector<Case> cases;
  for (const auto& e : std::filesystem::directory_iterator(std::string(R3CHECK_SOURCE_CORPUS) +
                                                           "/seeds")) {
    if (e.path().extension() == ".r3case") cases.push_back(LoadCaseFile(e.path().string()));
  }
  cases.push_back(Dp2Ragged(/*layers=*/3));
  return cases;
}

// When the device's judge finds no wrong value, the runner skips the read
// back: what it assumes must be what Decode reads from correct buffers.
TEST(FastJudgeTest, AllRightCapturesAreWhatDecodeReads) {
  for (const Case& c : SeedCases()) {
    const uint64_t seed = CaseSeed(c);
    const sut::Observation host = sut::RunSut(c, {});
    const Plan plan = BuildPlan(c, host, {}, seed);
    const auto bufs = CorrectReadback(c, plan, seed);
    const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
    ASSERT_EQ(d.wrong_values, 0) << PrintCase(c);
    const auto fast = CapturedWhenAllRight(c, plan, host, ReadbackRowsOf(c, plan));
    ASSERT_TRUE(fast.has_value()) << PrintCase(c);
    EXPECT_EQ(*fast, d.captured) << PrintCase(c);
    EXPECT_EQ(ValuesChecked(plan, ReadbackRowsOf(c, plan)), d.values_checked);
  }
}

TEST(FastJudgeTest, AClaimOtherThanTheModelsRowsNeedsTheReadBack) {
  const Case c = Dp2Ragged(/*layers=*/3);
  const uint64_t seed = CaseSeed(c);
  sut::Observation host = sut::RunSut(c, {});
  const Plan plan = BuildPlan(c, host, {}, seed);
  ASSERT_TRUE(CapturedWhenAllRight(c, plan, host, ReadbackRowsOf(c, plan)).has_value());
  host.ranks[1].captured = RowRuns{{0, 0, 3}};  // DP1 claims DP0's rows
  EXPECT_FALSE(CapturedWhenAllRight(c, plan, host, ReadbackRowsOf(c, plan)).has_value());
}

TEST(FastJudgeTest, ACaptureLongerThanTheModelsRowsNeedsTheReadBack) {
  const Case c = Dp2Ragged(/*layers=*/3);
  const uint64_t seed = CaseSeed(c);
  sut::Observation host = sut::RunSut(c, {});
  Plan plan = BuildPlan(c, host, {}, seed);
  plan.ranks[1].capture_end += 1;  // one row past DP1's 3 rows
  host.ranks[1].captured = RowRuns{{1, 0, 4}};
  EXPECT_FALSE(CapturedWhenAllRight(c, plan, host, ReadbackRowsOf(c, plan)).has_value());
}

TEST(FastJudgeTest, NonCapturingRanksCaptureNothing) {
  const Case c = Dp2Ragged(/*layers=*/3);
  const uint64_t seed = CaseSeed(c);
  const sut::Observation host = sut::RunSut(c, {});
  Plan plan = BuildPlan(c, host, {}, seed);
  plan.ranks[0].capture = false;
  sut::Observation claims = host;
  claims.ranks[0].captured.clear();
  const auto fast = CapturedWhenAllRight(c, plan, claims, ReadbackRowsOf(c, plan));
  ASSERT_TRUE(fast.has_value());
  EXPECT_TRUE((*fast)[0].empty());
  EXPECT_EQ((*fast)[1], host.ranks[1].captured);
}

TEST(AssembleResultTest, AWrongValueTheObservationCannotShowStillFails) {
  const Case c = Dp2Ragged(/*layers=*/3);
  const uint64_t seed = CaseSeed(c);
  const sut::Observation host = sut::RunSut(c, {});
  const Plan plan = BuildPlan(c, host, {}, seed);
  auto bufs = CorrectReadback(c, plan, seed);
  bufs[0][static_cast<size_t>((4 * plan.num_layers + (plan.layer + 1) % plan.num_layers) *
                              plan.top_k)] = 7;  // another layer of DP0's row 4
  const std::vector<int> devices = {0, 1};
  const GpuCaseResult clean = AssembleResult(
      c, plan, host, Decode(c, plan, host, seed, View(CorrectReadback(c, plan, seed), c, plan)),
      devices);
  EXPECT_TRUE(clean.Passes()) << clean.Summary();
  EXPECT_EQ(clean.layer, plan.layer);
  const GpuCaseResult r =
      AssembleResult(c, plan, host, Decode(c, plan, host, seed, View(bufs, c, plan)), devices);
  EXPECT_FALSE(r.Passes());
  EXPECT_EQ(r.wrong_values, 1);
  ASSERT_EQ(r.result.verdict.violations.size(), 1u);
  EXPECT_EQ(r.result.verdict.violations[0].invariant, check::Invariant::kRowsExact);
  EXPECT_NE(r.result.verdict.violations[0].message.find("gpu: 1 wrong values"),
            std::string::npos);
}

TEST(AssembleResultTest, AnOverfullReplayBufferNamesTheRanksDevice) {
  const Case c =
      LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/tp2-dp2-warmup.r3case");
  const sut::SutOptions legacy{.policy = sut::Policy::kLegacy};
  const uint64_t seed = CaseSeed(c);
  const sut::Observation host = sut::RunSut(c, legacy);
  const Plan plan = BuildPlan(c, host, {}, seed);
  const auto bufs = CorrectReadback(c, plan, seed);
  const std::vector<int> devices = {0, 1, 0, 1};
  const GpuCaseResult r =
      AssembleResult(c, plan, host, Decode(c, plan, host, seed, View(bufs, c, plan)), devices);
  EXPECT_TRUE(r.result.verdict.Violates(check::Invariant::kReplayFits));
  EXPECT_NE(r.result.observation.ranks[1].replay_error.find("tokens on cuda:1"),
            std::string::npos)
      << r.result.observation.ranks[1].replay_error;
}

TEST(FillTest, SeedsAreStableAndIdsFitInt16) {
  EXPECT_EQ(CaseSeed(SpecEager()), CaseSeed(SpecEager()));
  EXPECT_NE(CaseSeed(SpecEager()), CaseSeed(Dp2Ragged(1)));
  for (int64_t t = 0; t < 1000; ++t) {
    const int32_t v = FillValue(/*seed=*/42, /*dp=*/3, t, /*k=*/t % 8, FillIdSpace(1 << 20));
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 32768);
  }
}

}  // namespace
}  // namespace r3::gpu
