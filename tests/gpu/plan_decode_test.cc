// The GPU path's host side, without a GPU: the plan of collectives and
// slices, and the decoder that turns capturer buffers back into rows. Runs
// in CPU-only CI (no exit 77).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/case/corpus.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/fill.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/plan.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/sut.h"
#include "r3check_config.h"

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
  EXPECT_EQ(g.total, 10);
  for (const RankPlan& r : plan.ranks) EXPECT_EQ(r.n, 10);
  // Rank index d*T + t; every rank joins the one EP gather; no sp-tp-gather.
  ASSERT_EQ(plan.ranks.size(), 4u);
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    EXPECT_EQ(plan.ranks[i].dp, static_cast<int64_t>(i / 2)) << i;
    EXPECT_EQ(plan.ranks[i].tp, static_cast<int64_t>(i % 2)) << i;
    EXPECT_EQ(plan.ranks[i].group, 0) << i;
    EXPECT_TRUE(plan.ranks[i].capture) << i;
    EXPECT_FALSE(plan.ranks[i].tp_gather) << i;
    EXPECT_TRUE(plan.ranks[i].error.empty()) << plan.ranks[i].error;
  }
  EXPECT_TRUE(plan.tp_gathers.empty());
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
  const Plan plan = PlanFor(SpecEager(), sut::MutantSet(sut::MutantNamed("gpu-gather-reversed")));
  EXPECT_EQ(plan.gathers[0].offsets, (std::vector<int64_t>{7, 4, 2, 0}));
  EXPECT_EQ(plan.gathers[0].total, 10);
}

// Equal sizes would be one ncclAllGather, which cannot lay members out in
// reverse: the reversed mutant always uses grouped broadcasts.
TEST(PlanTest, ReversedGatherOfEqualSizesUsesBroadcasts) {
  const Case c = ParseCase(
      "r3case 1\ndp 2\ntp 1\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 4\nnum_experts 256\nnum_layers 2\ntokens 5 3\npadded 8 8\n",
      "test");
  const Plan plan = PlanFor(c, sut::MutantSet(sut::MutantNamed("gpu-gather-reversed")));
  ASSERT_EQ(plan.gathers.size(), 1u);
  EXPECT_FALSE(plan.gathers[0].equal_sizes);
  EXPECT_EQ(plan.gathers[0].offsets, (std::vector<int64_t>{8, 0}));
  EXPECT_EQ(plan.gathers[0].total, 16);
}

// The capture layer is drawn from the fill seed: one seed, one layer, and
// over seeds every layer of the model is checked.
TEST(PlanTest, CaptureLayerComesFromTheSeed) {
  const Case c = Dp2Ragged(/*layers=*/5);
  const sut::Observation host = sut::RunSut(c, {});
  std::vector<int> seen(5, 0);
  for (uint64_t seed = 0; seed < 64; ++seed) {
    const Plan plan = BuildPlan(c, host, {}, seed);
    ASSERT_GE(plan.layer, 0);
    ASSERT_LT(plan.layer, 5);
    EXPECT_EQ(BuildPlan(c, host, {}, seed).layer, plan.layer);
    ++seen[static_cast<size_t>(plan.layer)];
  }
  for (int l = 0; l < 5; ++l) EXPECT_GT(seen[static_cast<size_t>(l)], 0) << "layer " << l;
}

// The GPU-only mutants live in the kernels and collectives: the plan is how
// they get there, each one alone, as its catalogue row's bit.
TEST(PlanTest, GpuOnlyMutantsReachTheKernels) {
  const Case c = SpecEager();
  const Plan none = PlanFor(c);
  EXPECT_EQ(none.capture_bugs, sut::kNoCaptureBug);
  EXPECT_EQ(none.gather_bugs, sut::kNoGatherBug);
  const struct {
    const char* mutant;
    int32_t capture_bugs;
    int32_t gather_bugs;
  } kExpected[] = {
      {"gpu-layer-stride", sut::kLayerStrideBug, sut::kNoGatherBug},
      {"gpu-vec-groups", sut::kVecGroupsBug, sut::kNoGatherBug},
      {"gpu-tail-rows", sut::kTailRowsBug, sut::kNoGatherBug},
      {"gpu-gather-reversed", sut::kNoCaptureBug, sut::kReversedMembersBug},
      {"gpu-skipped-collective", sut::kNoCaptureBug, sut::kLastMemberSkipsBug},
  };
  for (const auto& e : kExpected) {
    const Plan plan = PlanFor(c, sut::MutantSet(sut::MutantNamed(e.mutant)));
    EXPECT_EQ(plan.capture_bugs, e.capture_bugs) << e.mutant;
    EXPECT_EQ(plan.gather_bugs, e.gather_bugs) << e.mutant;
  }
}

// The kernel runs when n fits the replay buffer, vLLM's `rows < n` check.
TEST(PlanTest, ReplayBufferOfExactlyNRowsRunsTheKernel) {
  const Case c = SpecEager();
  sut::Observation host = sut::RunSut(c, {});
  host.replay_rows = 10;  // every rank's router sees 10 rows
  for (const RankPlan& r : BuildPlan(c, host, {}, CaseSeed(c)).ranks) EXPECT_TRUE(r.replay_ok);
  host.replay_rows = 9;
  for (const RankPlan& r : BuildPlan(c, host, {}, CaseSeed(c)).ranks) EXPECT_FALSE(r.replay_ok);
}

// The GPU plan takes its dispatch from sut::PlanDispatch: every dispatch
// mutant of the SUT layer shapes the GPU's collectives the same way.
TEST(PlanTest, EveryDispatchMutantReachesTheGpuCollectives) {
  const Case eager = SpecEager();
  size_t dispatch_mutants = 0;
  for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
    if (!m.dispatch) continue;
    ++dispatch_mutants;
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
  EXPECT_GE(dispatch_mutants, 3u);
  // And they differ from the plain plan where the mutant changes dispatch.
  const Plan tp_major = PlanFor(eager, sut::MutantSet(sut::MutantNamed("tp-major-ep-order")));
  EXPECT_EQ(tp_major.gathers[0].members, (std::vector<int>{0, 2, 1, 3}));
  const Plan floor = PlanFor(eager, sut::MutantSet(sut::MutantNamed("floor-shard-size")));
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

Case InternalSp() {
  return LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/tp2-dp2-internal-sp.r3case");
}

TEST(PlanTest, InternalSpDispatchGathersOverTheTpGroup) {
  const Plan plan = PlanFor(InternalSp());
  EXPECT_TRUE(plan.gathers.empty());
  // N = [5, 3] padded to [6, 4]: each TP rank holds 3 (DP0) or 2 (DP1) rows.
  ASSERT_EQ(plan.tp_gathers.size(), 2u);
  EXPECT_EQ(plan.tp_gathers[0].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.tp_gathers[0].sizes, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(plan.tp_gathers[1].members, (std::vector<int>{2, 3}));
  EXPECT_EQ(plan.tp_gathers[1].sizes, (std::vector<int64_t>{2, 2}));
  for (const RankPlan& r : plan.ranks) {
    EXPECT_TRUE(r.capture);
    EXPECT_TRUE(r.tp_gather);
  }
}

// A TP rank that would all-gather while another of its DP rank does not
// would hang the collective: that DP rank's gathering ranks capture nothing,
// and the other DP rank still gathers.
TEST(PlanTest, ATpGroupWhoseRanksDoNotAllGatherCapturesNothing) {
  const Case c = InternalSp();
  const sut::Observation host = sut::RunSut(c, {});
  for (size_t odd : {1u, 2u}) {  // DP0's TP1, DP1's TP0
    sut::Observation split = host;
    ASSERT_EQ(split.ranks[odd].branch, sut::Branch::kSpTpGather);
    split.ranks[odd].branch = sut::Branch::kLocal;
    const Plan plan = BuildPlan(c, split, {}, CaseSeed(c));
    const size_t partner = odd ^ 1u;  // the other TP rank of the same DP rank
    EXPECT_FALSE(plan.ranks[partner].tp_gather) << odd;
    EXPECT_FALSE(plan.ranks[partner].capture) << odd;
    EXPECT_FALSE(plan.ranks[odd].tp_gather) << odd;
    const size_t other = odd < 2 ? 2 : 0;  // the other DP rank's first TP rank
    for (size_t i : {other, other + 1}) {
      EXPECT_TRUE(plan.ranks[i].tp_gather) << odd << " " << i;
      EXPECT_TRUE(plan.ranks[i].capture) << odd << " " << i;
    }
    ASSERT_EQ(plan.tp_gathers.size(), 1u) << odd;
    EXPECT_EQ(plan.tp_gathers[0].members,
              (std::vector<int>{static_cast<int>(other), static_cast<int>(other + 1)}));
  }
}

// A dispatch the SUT layer cannot carry out (a member holding fewer rows
// than its size) is every group member's error, and nobody captures.
// The host SUT's slice is refused before it can become an out-of-bounds
// access on the device: outside the tensor the capture reads, or longer than
// the capturer buffer. Bounds themselves are allowed.
TEST(PlanTest, CaptureSlicesOutsideTheTensorOrTheBufferAreRefused) {
  // M = 5, N = [5, 3]: naive DP dispatch gathers 8 rows for each rank.
  const Case c = ParseCase(
      "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 5\n"
      "top_k 4\nnum_experts 256\nnum_layers 2\ntokens 5 3\n",
      "test");
  const sut::Observation host = sut::RunSut(c, {});
  {
    const Plan plan = BuildPlan(c, host, {}, CaseSeed(c));
    ASSERT_EQ(plan.ranks[0].n, 8);
    // DP0's [0, 5) fills the 5-row buffer exactly; DP1's [5, 8) ends at n.
    EXPECT_EQ(plan.ranks[0].capture_start, 0);
    EXPECT_EQ(plan.ranks[0].capture_end, 5);
    EXPECT_EQ(plan.ranks[1].capture_start, 5);
    EXPECT_EQ(plan.ranks[1].capture_end, 8);
    for (const RankPlan& r : plan.ranks) {
      EXPECT_TRUE(r.error.empty()) << r.error;
      EXPECT_TRUE(r.capture);
    }
  }
  struct Slice {
    int64_t start, end;
    bool ok;
  };
  for (const Slice s : {Slice{-1, 2, false}, Slice{3, 2, false}, Slice{0, 9, false},
                        Slice{5, 9, false}, Slice{0, 6, false}, Slice{3, 8, true},
                        Slice{4, 4, true}, Slice{0, 0, true}}) {
    sut::Observation h = host;
    h.ranks[1].capture_start = s.start;
    h.ranks[1].capture_end = s.end;
    const Plan plan = BuildPlan(c, h, {}, CaseSeed(c));
    const RankPlan& r = plan.ranks[1];
    EXPECT_EQ(r.error.empty(), s.ok) << s.start << " " << s.end << ": " << r.error;
    EXPECT_EQ(r.capture, s.ok) << s.start << " " << s.end;
    if (!s.ok) {
      EXPECT_NE(r.error.find("gpu: capture slice"), std::string::npos) << r.error;
    }
    EXPECT_TRUE(plan.ranks[0].error.empty()) << plan.ranks[0].error;
  }
  // A rank whose capture raised has no slice to check.
  sut::Observation raised = host;
  raised.ranks[1].branch = sut::Branch::kError;
  raised.ranks[1].capture_end = 99;
  const Plan plan = BuildPlan(c, raised, {}, CaseSeed(c));
  EXPECT_FALSE(plan.ranks[1].capture);
  EXPECT_TRUE(plan.ranks[1].error.empty()) << plan.ranks[1].error;
}

// sp-tp-gather captures from the TP group's gathered tensor, T times the
// rank's own rows.
TEST(PlanTest, ATpGatherSliceMayReachTheGatheredRows) {
  const Case c = InternalSp();
  const sut::Observation host = sut::RunSut(c, {});
  sut::Observation h = host;
  h.ranks[0].capture_start = 0;
  h.ranks[0].capture_end = 6;  // DP0's 3 rows on each of 2 TP ranks
  EXPECT_TRUE(BuildPlan(c, h, {}, CaseSeed(c)).ranks[0].error.empty());
  h.ranks[0].capture_end = 7;
  const Plan plan = BuildPlan(c, h, {}, CaseSeed(c));
  EXPECT_FALSE(plan.ranks[0].error.empty());
  EXPECT_FALSE(plan.ranks[0].capture);
  EXPECT_FALSE(plan.ranks[0].tp_gather);
}

// A case with its fill seed, the host SUT's observation and the GPU plan:
// where the decode tests start.
struct Planned {
  Case c;
  uint64_t seed = 0;
  sut::Observation host;
  Plan plan;
};

Planned PlanCase(const Case& c) {
  Planned p{c, CaseSeed(c), sut::RunSut(c, {}), {}};
  p.plan = BuildPlan(p.c, p.host, {}, p.seed);
  return p;
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
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  const auto bufs = CorrectReadback(c, plan, seed);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.wrong_values, 0);
  EXPECT_GT(d.values_checked, 0);
  for (size_t i = 0; i < plan.ranks.size(); ++i) EXPECT_EQ(d.captured[i], host.ranks[i].captured);
}

TEST(DecodeTest, WrongRowsPoisonAndStrayWritesAreSeen) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
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

// Sets DP rank row `row` of a rank's read-back, at the capture layer, to
// the fill of (dp, token).
std::vector<int64_t> ReadbackRowsOf(const Case& c, const Plan& plan);

// Values of two read-backs that differ.
int64_t Differences(const std::vector<std::vector<int32_t>>& a,
                    const std::vector<std::vector<int32_t>>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < a[i].size(); ++j) n += a[i][j] != b[i][j] ? 1 : 0;
  }
  return n;
}

void PutRow(std::vector<int32_t>& buf, const Plan& plan, uint64_t seed, int64_t row, int64_t dp,
            int64_t token) {
  for (int64_t k = 0; k < plan.top_k; ++k) {
    buf[static_cast<size_t>((row * plan.num_layers + plan.layer) * plan.top_k + k)] =
        FillValue(seed, dp, token, k, plan.id_space);
  }
}

// A row holding another row of the step decodes as that row, wherever it
// comes from: the same DP rank or another one, token 0 included.
TEST(DecodeTest, MisplacedRowsDecodeToTheRowsTheyHold) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  auto bufs = CorrectReadback(c, plan, seed);
  PutRow(bufs[1], plan, seed, /*row=*/1, /*dp=*/1, /*token=*/0);  // DP1's own row 0 again
  PutRow(bufs[1], plan, seed, /*row=*/2, /*dp=*/0, /*token=*/2);  // DP0's row of the same index
  PutRow(bufs[0], plan, seed, /*row=*/3, /*dp=*/1, /*token=*/2);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  // DP1's row 0 twice is one run of stride 0 in the canonical form.
  RowRuns dp1_rows;
  for (const RowRun& run : {RowRun{1, 0, 1}, RowRun{1, 0, 1}, RowRun{0, 2, 1}}) {
    AppendRun(dp1_rows, run);
  }
  EXPECT_EQ(d.captured[1], dp1_rows);
  EXPECT_EQ(DescribeRuns(d.captured[1]), "dp1[0..1) dp1[0..1) dp0[2..3)");
  EXPECT_EQ(d.captured[0], (RowRuns{{0, 0, 3}, {1, 2, 1}, {0, 4, 1}}));
  EXPECT_EQ(d.wrong_values, Differences(bufs, CorrectReadback(c, plan, seed)));
  EXPECT_GT(d.wrong_values, 0);
}

// A row that differs from every row of the step in one value is no row of
// the step (padding), whichever value it is.
TEST(DecodeTest, ARowOffByOneValueIsNoRowOfTheStep) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  auto bufs = CorrectReadback(c, plan, seed);
  const int64_t k = plan.top_k;
  const auto at = [&](int64_t row, int64_t j) {
    return static_cast<size_t>((row * plan.num_layers + plan.layer) * k + j);
  };
  bufs[0][at(3, 0)] = static_cast<int32_t>((bufs[0][at(3, 0)] + 1) % plan.id_space);
  bufs[0][at(4, k - 1)] = static_cast<int32_t>((bufs[0][at(4, k - 1)] + 1) % plan.id_space);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.captured[0], (RowRuns{{0, 0, 3}, {RowRun::kPad, 0, 2}}));
  EXPECT_EQ(d.wrong_values, 2);
}

// The fill of token N[dp] (a row past the DP rank's rows, as a capture
// reading too far would copy) is no row of the step.
TEST(DecodeTest, ARowPastTheDpRanksRowsIsPadding) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  plan.ranks[1].capture_end += 1;  // one row past DP1's 3 rows
  auto bufs = CorrectReadback(c, plan, seed);
  PutRow(bufs[1], plan, seed, /*row=*/3, /*dp=*/1, /*token=*/3);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.captured[1], (RowRuns{{1, 0, 3}, {RowRun::kPad, 0, 1}}));
}

// The model's rows are decoded as such even when the host SUT claims others.
TEST(DecodeTest, TheModelsRowsBeatAWrongClaim) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  host.ranks[1].captured = RowRuns{{0, 0, 3}};  // DP1 claims DP0's rows
  const auto bufs = CorrectReadback(c, plan, seed);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.captured[1], (RowRuns{{1, 0, 3}}));
  EXPECT_EQ(d.wrong_values, 0);
}

// With one expert every row of the step has the same fill: each captured row
// is then the host SUT's claim for it, run by run.
TEST(DecodeTest, EqualFillsAreTheHostsClaim) {
  auto [c, seed, host, plan] = PlanCase(ParseCase(
      "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 1\nnum_experts 1\nnum_layers 2\ntokens 6 4\n",
      "test"));
  ASSERT_EQ(plan.ranks[1].capture_end - plan.ranks[1].capture_start, 4);
  const RowRuns claim = {{0, 3, 2}, {0, 0, 1}, {RowRun::kPad, 0, 1}};
  host.ranks[1].captured = claim;
  const auto bufs = CorrectReadback(c, plan, seed);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  // Rows 0-2 are the claimed rows; row 3, claimed as padding, holds DP1's
  // row 3, the model's.
  EXPECT_EQ(d.captured[1], (RowRuns{{0, 3, 2}, {0, 0, 1}, {1, 3, 1}}));
  EXPECT_EQ(d.captured[0], host.ranks[0].captured);
  EXPECT_EQ(d.wrong_values, 0);
}

// A rank that does not capture decodes to no rows; its values are checked.
TEST(DecodeTest, ANonCapturingRankDecodesToNoRows) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  const auto bufs = CorrectReadback(c, plan, seed);
  plan.ranks[0].capture = false;  // its slice [0, 5) stays in the plan
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_TRUE(d.captured[0].empty());
  EXPECT_EQ(d.captured[1], host.ranks[1].captured);
  EXPECT_EQ(d.values_checked, ValuesChecked(plan, ReadbackRowsOf(c, plan)));
}

// Decode reads the rows it is handed and no more.
TEST(DecodeTest, OnlyTheRowsReadBackAreDecoded) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  auto bufs = CorrectReadback(c, plan, seed);
  bufs[0].resize(static_cast<size_t>(2 * plan.num_layers * plan.top_k));  // DP0: 2 rows of 5
  std::vector<Readback> view = View(bufs, c, plan);
  view[0].rows = 2;
  const Decoded d = Decode(c, plan, host, seed, view);
  EXPECT_EQ(d.captured[0], (RowRuns{{0, 0, 2}}));
  EXPECT_EQ(d.captured[1], host.ranks[1].captured);
  EXPECT_EQ(d.values_checked, (2 + 4) * plan.num_layers * plan.top_k);
  EXPECT_EQ(d.wrong_values, 0);
}

// A rank's decode cut into row chunks (the runner decodes a big case's
// chunks on the thread pool) gives, chunks appended in order, the runs of
// the whole rank, wherever the two cuts fall.
void ExpectChunksAppendToTheWholeDecode(const Case& c, const Plan& plan,
                                        const sut::Observation& host, uint64_t seed,
                                        const std::vector<Readback>& view) {
  const Decoded whole = Decode(c, plan, host, seed, view);
  for (size_t rank = 0; rank < plan.ranks.size(); ++rank) {
    const int64_t n = CaptureRowsOf(plan, rank, view[rank].rows);
    std::vector<int32_t> layer_rows;
    for (int64_t row = 0; row < n; ++row) {
      const int32_t* at = view[rank].data + (row * plan.num_layers + plan.layer) * plan.top_k;
      layer_rows.insert(layer_rows.end(), at, at + plan.top_k);
    }
    const CaptureRows rows{layer_rows.data(), n};
    const RowIndex index(c, seed, plan.id_space);
    for (int64_t cut = 0; cut <= n; ++cut) {
      for (int64_t cut2 = cut; cut2 <= n; ++cut2) {
        RowRuns runs = DecodeRankRows(c, plan, host, index, rank, rows, 0, cut);
        AppendRuns(runs, DecodeRankRows(c, plan, host, index, rank, rows, cut, cut2));
        AppendRuns(runs, DecodeRankRows(c, plan, host, index, rank, rows, cut2, n));
        EXPECT_EQ(runs, whole.captured[rank]) << "rank " << rank << " cut at " << cut << ", " << cut2;
      }
    }
    // Row by row: the decode's own folding of rows into runs before it
    // appends them is AppendRun's, one row at a time.
    RowRuns rows_one_by_one;
    for (int64_t row = 0; row < n; ++row) {
      AppendRuns(rows_one_by_one, DecodeRankRows(c, plan, host, index, rank, rows, row, row + 1));
    }
    EXPECT_EQ(rows_one_by_one, whole.captured[rank]) << "rank " << rank << " row by row";
  }
  // The summaries' part alone names the same wrong values and mismatch.
  std::vector<int64_t> checked;
  for (const Readback& rb : view) checked.push_back(rb.rows);
  const Decoded head = DecodeSummaryOnly(c, plan, seed, Summarize(c, plan, seed, view), checked);
  EXPECT_EQ(head.wrong_values, whole.wrong_values);
  EXPECT_EQ(head.values_checked, whole.values_checked);
  ASSERT_EQ(head.first_mismatch.has_value(), whole.first_mismatch.has_value());
  if (head.first_mismatch) {
    EXPECT_EQ(head.first_mismatch->row, whole.first_mismatch->row);
    EXPECT_EQ(head.first_mismatch->got, whole.first_mismatch->got);
  }
  for (const RowRuns& runs : head.captured) EXPECT_TRUE(runs.empty());
}

// Two DP ranks of 13 and 9 rows over 3 layers whose DP0 rows 2..7 hold
// DP1's rows at stride 2 (mod 9): the scattered capture the decode tests
// below start from.
struct Scattered {
  Planned planned;
  std::vector<std::vector<int32_t>> bufs;
};

Scattered ScatteredCapture(int64_t top_k) {
  Scattered s{PlanCase(ParseCase("r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\n"
                                 "max_num_batched_tokens 64\ntop_k " + std::to_string(top_k) +
                                     "\nnum_experts 256\nnum_layers 3\ntokens 13 9\n",
                                 "test")),
              {}};
  const Planned& p = s.planned;
  s.bufs = CorrectReadback(p.c, p.plan, p.seed);
  for (int64_t row = 2; row < 8; ++row) PutRow(s.bufs[0], p.plan, p.seed, row, /*dp=*/1, (row * 2) % 9);
  return s;
}

// Cuts through a claim's run, a strided group of scattered rows, padding,
// and a row the claim gets wrong.
TEST(DecodeTest, ChunksOfScatteredRowsAppendToTheWholeDecode) {
  auto [planned, bufs] = ScatteredCapture(/*top_k=*/4);
  auto& [c, seed, host, plan] = planned;
  // DP0: row 8 poison, rows 9.. the model's; DP1 claims DP0's rows 4.. for
  // its first rows.
  for (int64_t j = 0; j < plan.top_k; ++j) {
    bufs[0][static_cast<size_t>((8 * plan.num_layers + plan.layer) * plan.top_k + j)] = kPoison;
  }
  host.ranks[1].captured = RowRuns{{0, 4, 3}, {1, 3, 6}};
  const std::vector<Readback> view = View(bufs, c, plan);
  ASSERT_GT(PlainRunCount(Decode(c, plan, host, seed, view).captured[0]), 3);
  ExpectChunksAppendToTheWholeDecode(c, plan, host, seed, view);
}

// The judge's written rows: rows past the last one the capture wrote at the
// capture layer are unwritten, decode as padding, and are not read back (a
// lying tail is never looked at); with the count unknown every row is read,
// to the same runs.
TEST(DecodeTest, RowsPastTheLastWrittenOneDecodeAsPaddingUnread) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  auto bufs = CorrectReadback(c, plan, seed);
  const int64_t n = CaptureRowsOf(plan, 0, ReadbackRowsOf(c, plan)[0]);
  ASSERT_GE(n, 4);
  const auto cell = [&](int64_t row, int64_t k) -> int32_t& {
    return bufs[0][static_cast<size_t>((row * plan.num_layers + plan.layer) * plan.top_k + k)];
  };
  for (int64_t k = 0; k < plan.top_k; ++k) cell(n - 2, k) = cell(n - 1, k) = kUnwritten;
  const std::vector<Readback> view = View(bufs, c, plan);
  std::vector<RankSummary> summaries = Summarize(c, plan, seed, view);
  EXPECT_EQ(summaries[0].written_rows, n - 2);
  EXPECT_EQ(summaries[1].written_rows, CaptureRowsOf(plan, 1, view[1].rows));
  EXPECT_EQ(DecodedRowsOf(summaries[0], n), n - 2);
  EXPECT_EQ(DecodedRowsOf(RankSummary{}, n), n);
  EXPECT_EQ(DecodedRowsOf(RankSummary{.written_rows = 0}, n), 0);
  // A rank that wrote nothing at the capture layer: 0 rows written.
  auto unwritten = bufs;
  for (int64_t row = 0; row < view[1].rows; ++row) {
    for (int64_t k = 0; k < plan.top_k; ++k) {
      unwritten[1][static_cast<size_t>((row * plan.num_layers + plan.layer) * plan.top_k + k)] =
          kUnwritten;
    }
  }
  EXPECT_EQ(Summarize(c, plan, seed, View(unwritten, c, plan))[1].written_rows, 0);
  std::vector<int64_t> checked;
  std::vector<std::vector<int32_t>> layer_rows(plan.ranks.size());
  std::vector<CaptureRows> rows;
  for (size_t r = 0; r < plan.ranks.size(); ++r) {
    checked.push_back(view[r].rows);
    const int64_t m = CaptureRowsOf(plan, r, view[r].rows);
    for (int64_t row = 0; row < m; ++row) {
      const int32_t* at = view[r].data + (row * plan.num_layers + plan.layer) * plan.top_k;
      layer_rows[r].insert(layer_rows[r].end(), at, at + plan.top_k);
    }
    rows.push_back({layer_rows[r].data(), m});
  }
  const Decoded cut = DecodeSummary(c, plan, host, seed, summaries, checked, rows);
  EXPECT_EQ(cut.captured[0], (RowRuns{{0, 0, n - 2}, {RowRun::kPad, 0, 2}}));
  EXPECT_EQ(cut.captured[1], host.ranks[1].captured);
  std::vector<RankSummary> unknown = summaries;
  for (RankSummary& s : unknown) s.written_rows = -1;
  EXPECT_EQ(DecodeSummary(c, plan, host, seed, unknown, checked, rows).captured, cut.captured);
  // A tail the summary says is unwritten is not read: DP1's first row there
  // would decode as that row.
  for (int64_t k = 0; k < plan.top_k; ++k) {
    layer_rows[0][static_cast<size_t>((n - 1) * plan.top_k + k)] = FillValue(seed, 1, 0, k, plan.id_space);
  }
  EXPECT_EQ(DecodeSummary(c, plan, host, seed, summaries, checked, rows).captured, cut.captured);
  EXPECT_NE(DecodeSummary(c, plan, host, seed, unknown, checked, rows).captured[0], cut.captured[0]);
}

// Scattered rows whose token steps jump past a group's next row (by two or
// three steps) or step back to its row before last: a group grows only by
// its own next row. The decode gathers rows into groups itself; checked
// against AppendRun row by row (single-row chunks) and by hand.
TEST(DecodeTest, ScatteredRowsThatJumpOrStepBackStartNewRuns) {
  auto [planned, bufs] = ScatteredCapture(/*top_k=*/4);
  auto& [c, seed, host, plan] = planned;
  // DP0's rows 1..12: DP1's rows 0 2 | 8, DP0's own row 4, DP1's 3 4 5 | 7,
  // DP0's row 9, DP1's 5 6 | 5 ("|": where a run must end).
  const Identity rows[] = {{1, 0}, {1, 2}, {1, 8}, {0, 4}, {1, 3}, {1, 4},
                           {1, 5}, {1, 7}, {0, 9}, {1, 5}, {1, 6}, {1, 5}};
  for (int64_t i = 0; i < 12; ++i) PutRow(bufs[0], plan, seed, /*row=*/1 + i, rows[i].dp, rows[i].token);
  const std::vector<Readback> view = View(bufs, c, plan);
  EXPECT_EQ(Decode(c, plan, host, seed, view).captured[0],
            (RowRuns{{0, 0, 1}, {1, 0, 2, 2}, {1, 8, 1}, {0, 4, 1}, {1, 3, 3}, {1, 7, 1}, {0, 9, 1},
                     {1, 5, 2}, {1, 5, 1}}));
  ExpectChunksAppendToTheWholeDecode(c, plan, host, seed, view);
}

// The device's row lookups (CaptureRows::found) stand in for the host's
// index: with them, as the device writes them (the model's row, the one
// step row with these values, none, or "ask the host" when several have
// them), every row decodes as the host's own index and poison test decode
// it, without the host reading the row's values.
TEST(DecodeTest, TheDevicesLookupsDecodeAsTheHostsIndex) {
  auto [planned, bufs] = ScatteredCapture(/*top_k=*/2);
  auto& [c, seed, host, plan] = planned;
  const auto cell = [&](int64_t rank, int64_t row, int64_t k) -> int32_t& {
    return bufs[static_cast<size_t>(rank)][static_cast<size_t>(
        (row * plan.num_layers + plan.layer) * plan.top_k + k)];
  };
  for (int64_t k = 0; k < plan.top_k; ++k) {
    cell(0, 8, k) = kPoison;   // SP padding
    cell(0, 9, k) = 1000 + k;  // no row of the step
  }
  PutRow(bufs[1], plan, seed, /*row=*/5, /*dp=*/0, /*token=*/0);  // packed as 0
  host.ranks[1].captured = RowRuns{{0, 4, 3}, {1, 3, 6}};  // a claim partly wrong
  const RowIndex index(c, seed, plan.id_space);
  int64_t asked = 0, unique = 0, none = 0;
  for (size_t rank = 0; rank < plan.ranks.size(); ++rank) {
    const RankPlan& r = plan.ranks[rank];
    const int64_t n = CaptureRowsOf(plan, rank, ReadbackRowsOf(c, plan)[rank]);
    std::vector<int32_t> values;
    std::vector<int64_t> found;
    for (int64_t row = 0; row < n; ++row) {
      std::vector<int32_t> v;
      for (int64_t k = 0; k < plan.top_k; ++k) v.push_back(cell(static_cast<int64_t>(rank), row, k));
      values.insert(values.end(), v.begin(), v.end());
      std::vector<Identity> same;
      for (int64_t d = 0; d < c.config.dp; ++d) {
        for (int64_t t = 0; t < c.step.padded[static_cast<size_t>(d)]; ++t) {
          if (index.Matches(v.data(), Identity{d, t})) same.push_back({d, t});
        }
      }
      const bool model = row < c.step.padded[static_cast<size_t>(r.dp)] &&
                         index.Matches(v.data(), Identity{r.dp, row});
      // The device may also leave any row to the host (a full table slot).
      found.push_back(model                                ? kModelRow
                      : row % 3 == 0 || same.size() > 1 ? (++asked, kAskTheHost)
                      : same.empty()                       ? (++none, kNoStepRow)
                      : (++unique, PackedRow(same[0].dp, same[0].token)));
    }
    const RowRuns host_index =
        DecodeRankRows(c, plan, host, index, rank, CaptureRows{values.data(), n}, 0, n);
    EXPECT_EQ(DecodeRankRows(c, plan, host, index, rank, CaptureRows{values.data(), n, found.data()},
                             0, n),
              host_index)
        << "rank " << rank;
  }
  // Every kind of answer was given.
  EXPECT_GT(asked, 0);
  EXPECT_GT(unique, 0);
  EXPECT_GT(none, 0);
}

// With one expert every row has the same fill and each row is its claim:
// a chunk must start at its own row's claim, not the rank's first.
TEST(DecodeTest, ChunksOfEqualFillsEachStartAtTheirOwnClaim) {
  auto [c, seed, host, plan] = PlanCase(ParseCase(
      "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 1\nnum_experts 1\nnum_layers 2\ntokens 9 7\n",
      "test"));
  host.ranks[1].captured = RowRuns{{0, 3, 2}, {0, 0, 1}, {1, 6, 1}, {0, 8, 1}, {1, 1, 2}};
  host.ranks[0].captured = RowRuns{{1, 0, 4}, {0, 4, 5}};
  const auto bufs = CorrectReadback(c, plan, seed);
  const std::vector<Readback> view = View(bufs, c, plan);
  ASSERT_EQ(Decode(c, plan, host, seed, view).captured[1], host.ranks[1].captured);
  ExpectChunksAppendToTheWholeDecode(c, plan, host, seed, view);
}

// The first mismatch names the rank, TP rank included.
TEST(DecodeTest, TheFirstMismatchNamesItsRank) {
  auto [c, seed, host, plan] = PlanCase(SpecEager());
  auto bufs = CorrectReadback(c, plan, seed);
  // DP1 TP1 (rank 3): row 3 is past DP1's 3 rows and must stay unwritten.
  bufs[3][static_cast<size_t>((3 * plan.num_layers + plan.layer) * plan.top_k + 2)] = 7;
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.wrong_values, 1);
  ASSERT_TRUE(d.first_mismatch.has_value());
  EXPECT_EQ(d.first_mismatch->dp, 1);
  EXPECT_EQ(d.first_mismatch->tp, 1);
  EXPECT_EQ(d.first_mismatch->row, 3);
  EXPECT_EQ(d.first_mismatch->layer, plan.layer);
  EXPECT_EQ(d.first_mismatch->k, 2);
  EXPECT_EQ(d.first_mismatch->got, 7);
  EXPECT_EQ(d.first_mismatch->expected, kUnwritten);
}

// The judge's summary per rank: the count, the first wrong value's flat
// index in (rows, L, K) and the value there (what the device's judge writes).
TEST(SummarizeTest, EachRankHasItsCountAndFirstWrongValue) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  auto bufs = CorrectReadback(c, plan, seed);
  const int64_t k = plan.top_k;
  const int64_t layers = plan.num_layers;
  const int64_t stray = (4 * layers + (plan.layer + 1) % layers) * k;
  bufs[0][static_cast<size_t>(stray)] = 7;
  const int64_t poisoned = (2 * layers + plan.layer) * k + 1;
  bufs[0][static_cast<size_t>(poisoned)] = kPoison;
  const std::vector<RankSummary> s = Summarize(c, plan, seed, View(bufs, c, plan));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].wrong_values, 2);
  EXPECT_EQ(s[0].first_index, poisoned);
  EXPECT_EQ(s[0].first_got, kPoison);
  EXPECT_EQ(s[1].wrong_values, 0);
  EXPECT_EQ(s[1].first_index, -1);
  // DecodeSummary names the same first mismatch from the summary alone.
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  ASSERT_TRUE(d.first_mismatch.has_value());
  EXPECT_EQ(d.first_mismatch->row, 2);
  EXPECT_EQ(d.first_mismatch->layer, plan.layer);
  EXPECT_EQ(d.first_mismatch->k, 1);
  EXPECT_EQ(d.first_mismatch->got, kPoison);
  EXPECT_EQ(d.first_mismatch->expected, FillValue(seed, 0, 2, 1, plan.id_space));
}

// An unclaimed row past the DP rank's rows, equal to many rows of the step
// (one expert: every fill is 0), is the step row indexed last: DP1's last
// row. (The order the decode has always given; outputs depend on it.)
TEST(DecodeTest, AnUnclaimedRowOfManyEqualFillsIsTheLastStepRow) {
  auto [c, seed, host, plan] = PlanCase(ParseCase(
      "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 1\nnum_experts 1\nnum_layers 2\ntokens 6 4\n",
      "test"));
  plan.ranks[1].capture_end += 1;  // one row past DP1's 4 rows, claimed as nothing
  auto bufs = CorrectReadback(c, plan, seed);
  PutRow(bufs[1], plan, seed, /*row=*/4, /*dp=*/0, /*token=*/0);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  EXPECT_EQ(d.captured[1], (RowRuns{{1, 0, 4}, {1, 3, 1}}));
}

// Every row the judge reads: the DP rank's rows or the capture slice,
// whichever is longer, and one more, within the capturer buffer.
TEST(ReadbackRowsTest, TheRanksRowsOrItsSliceAndOneMore) {
  {
    const Case c = Dp2Ragged(/*layers=*/3);  // M = 64, N = [5, 3], slices [0, 5) and [5, 8)
    Plan plan = PlanFor(c);
    EXPECT_EQ(ReadbackRows(plan, c, 0), 6);
    EXPECT_EQ(ReadbackRows(plan, c, 1), 4);
    plan.ranks[1].capture_end = 11;  // a 6-row slice
    EXPECT_EQ(ReadbackRows(plan, c, 1), 7);
    plan.ranks[1].capture = false;  // not captured: only the DP rank's rows count
    EXPECT_EQ(ReadbackRows(plan, c, 1), 4);
  }
  {
    const Case c = ParseCase(
        "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 5\n"
        "top_k 4\nnum_experts 256\nnum_layers 2\ntokens 5 3\n",
        "test");
    const Plan plan = PlanFor(c);
    EXPECT_EQ(ReadbackRows(plan, c, 0), 5);  // the whole buffer, no row past it
    EXPECT_EQ(ReadbackRows(plan, c, 1), 4);
  }
}

std::vector<int64_t> ReadbackRowsOf(const Case& c, const Plan& plan) {
  std::vector<int64_t> rows;
  for (size_t i = 0; i < plan.ranks.size(); ++i) rows.push_back(ReadbackRows(plan, c, i));
  return rows;
}

std::vector<Case> SeedCases() {
  std::vector<Case> cases;
  for (const std::string& path : ListCaseFiles(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds")) {
    cases.push_back(LoadCaseFile(path));
  }
  cases.push_back(Dp2Ragged(/*layers=*/3));
  for (const char* tokens : {"5 1", "0 0"}) {  // a one-row capture; an idle step
    cases.push_back(ParseCase(std::string("r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\n"
                                          "sp auto\nmax_num_batched_tokens 64\ntop_k 4\n"
                                          "num_experts 256\nnum_layers 2\ntokens ") +
                                  tokens + "\n",
                              "test"));
  }
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
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  ASSERT_TRUE(CapturedWhenAllRight(c, plan, host, ReadbackRowsOf(c, plan)).has_value());
  host.ranks[1].captured = RowRuns{{0, 0, 3}};  // DP1 claims DP0's rows
  EXPECT_FALSE(CapturedWhenAllRight(c, plan, host, ReadbackRowsOf(c, plan)).has_value());
}

TEST(FastJudgeTest, ACaptureLongerThanTheModelsRowsNeedsTheReadBack) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  plan.ranks[1].capture_end += 1;  // one row past DP1's 3 rows
  host.ranks[1].captured = RowRuns{{1, 0, 4}};
  EXPECT_FALSE(CapturedWhenAllRight(c, plan, host, ReadbackRowsOf(c, plan)).has_value());
}

TEST(FastJudgeTest, NonCapturingRanksCaptureNothing) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  plan.ranks[0].capture = false;
  sut::Observation claims = host;
  claims.ranks[0].captured.clear();
  const auto fast = CapturedWhenAllRight(c, plan, claims, ReadbackRowsOf(c, plan));
  ASSERT_TRUE(fast.has_value());
  EXPECT_TRUE((*fast)[0].empty());
  EXPECT_EQ((*fast)[1], host.ranks[1].captured);
}

using check::DeviceLine;

// The GPU observation as every front end judges it.
check::CaseResult JudgeAssembled(const Case& c, const Plan& plan, const sut::Observation& host,
                                 Decoded decoded, const std::vector<int>& devices) {
  return check::JudgeObservation(c, AssembleObservation(plan, host, std::move(decoded), devices));
}

TEST(AssembleObservationTest, AWrongValueTheObservationCannotShowStillFails) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  auto bufs = CorrectReadback(c, plan, seed);
  bufs[0][static_cast<size_t>((4 * plan.num_layers + (plan.layer + 1) % plan.num_layers) *
                              plan.top_k)] = 7;  // another layer of DP0's row 4
  const std::vector<int> devices = {0, 1};
  const check::CaseResult clean = JudgeAssembled(
      c, plan, host, Decode(c, plan, host, seed, View(CorrectReadback(c, plan, seed), c, plan)),
      devices);
  EXPECT_TRUE(clean.PassesOrKnown()) << DeviceLine(clean.observation);
  EXPECT_EQ(clean.observation.device->layer, plan.layer);
  const check::CaseResult r = JudgeAssembled(c, plan, host, Decode(c, plan, host, seed, View(bufs, c, plan)), devices);
  EXPECT_FALSE(r.PassesOrKnown());
  EXPECT_EQ(r.observation.device->wrong_values, 1);
  ASSERT_EQ(r.verdict.violations.size(), 1u);
  EXPECT_EQ(r.verdict.violations[0].invariant, check::Invariant::kRowsExact);
  EXPECT_NE(r.verdict.violations[0].message.find("gpu: 1 wrong values"),
            std::string::npos);
}

TEST(AssembleObservationTest, AnOverfullReplayBufferNamesTheRanksDevice) {
  const Case c =
      LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/tp2-dp2-warmup.r3case");
  const sut::SutOptions legacy{.policy = sut::Policy::kLegacy};
  const uint64_t seed = CaseSeed(c);
  const sut::Observation host = sut::RunSut(c, legacy);
  const Plan plan = BuildPlan(c, host, {}, seed);
  const auto bufs = CorrectReadback(c, plan, seed);
  const std::vector<int> devices = {0, 1, 0, 1};
  const check::CaseResult r = JudgeAssembled(c, plan, host, Decode(c, plan, host, seed, View(bufs, c, plan)), devices);
  EXPECT_TRUE(r.verdict.Violates(check::Invariant::kReplayFits));
  EXPECT_NE(r.observation.ranks[1].replay_error.find("tokens on cuda:1"),
            std::string::npos)
      << r.observation.ranks[1].replay_error;
}

// The GPU observation is what the GPU did: its router rows, its decoded
// captures, its kernel input, and what the device checked.
TEST(AssembleObservationTest, TheObservationIsTheGpus) {
  auto [c, seed, host, plan] = PlanCase(Dp2Ragged(/*layers=*/3));
  plan.layer = 2;
  auto bufs = CorrectReadback(c, plan, seed);
  PutRow(bufs[0], plan, seed, /*row=*/1, /*dp=*/1, /*token=*/1);
  PutRow(bufs[1], plan, seed, /*row=*/0, /*dp=*/0, /*token=*/2);
  const Decoded d = Decode(c, plan, host, seed, View(bufs, c, plan));
  ASSERT_NE(d.captured[0], host.ranks[0].captured);
  ASSERT_NE(d.captured[1], host.ranks[1].captured);
  sut::Observation claims = host;
  claims.kernel_rows = 1000;  // whatever the host said, the GPU's kernel saw n
  const std::vector<int> devices = {1, 0};
  const check::CaseResult r = JudgeAssembled(c, plan, claims, d, devices);
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    EXPECT_EQ(r.observation.ranks[i].captured, d.captured[i]) << i;
    EXPECT_EQ(r.observation.ranks[i].n, plan.ranks[i].n) << i;
    EXPECT_TRUE(r.observation.ranks[i].replay_error.empty());
  }
  EXPECT_EQ(r.observation.kernel_rows, 8);
  const sut::DeviceCheck& device = r.observation.device.value();
  EXPECT_EQ(device.layer, 2);
  EXPECT_EQ(device.steps, 1);
  EXPECT_EQ(device.values_checked, d.values_checked);
  EXPECT_EQ(device.wrong_values, d.wrong_values);
  ASSERT_TRUE(device.first_mismatch.has_value());
  EXPECT_EQ(device.first_mismatch->dp, d.first_mismatch->dp);
  EXPECT_EQ(device.first_mismatch->row, d.first_mismatch->row);
  EXPECT_EQ(device.first_mismatch->k, d.first_mismatch->k);
  EXPECT_FALSE(r.verdict.ok());  // the captured rows are wrong
  EXPECT_FALSE(r.PassesOrKnown());
}

TEST(AssembleObservationTest, AnIdleStepHandsTheKernelNoRows) {
  auto [c, seed, host, plan] = PlanCase(ParseCase(
      "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 4\nnum_experts 256\nnum_layers 2\ntokens 0 0\n",
      "test"));
  const auto bufs = CorrectReadback(c, plan, seed);
  const std::vector<int> devices = {0, 0};
  const check::CaseResult r = JudgeAssembled(c, plan, host, Decode(c, plan, host, seed, View(bufs, c, plan)), devices);
  EXPECT_EQ(r.observation.kernel_rows, 0);
  EXPECT_TRUE(r.PassesOrKnown()) << DeviceLine(r.observation);
}

// When the GPU's router and the host SUT disagree on a rank's rows, that
// rank's observation is the plan's error, with the GPU's row count.
TEST(AssembleObservationTest, ARouterDisagreementIsTheRanksError) {
  const Case c = Dp2Ragged(/*layers=*/3);
  const uint64_t seed = CaseSeed(c);
  sut::Observation host = sut::RunSut(c, {});
  host.ranks[0].n += 1;
  const Plan plan = BuildPlan(c, host, {}, seed);
  ASSERT_EQ(plan.ranks[0].error, "gpu: the router saw 8 rows, the host SUT 9");
  EXPECT_FALSE(plan.ranks[0].capture);
  EXPECT_TRUE(plan.ranks[1].error.empty());
  const auto bufs = CorrectReadback(c, plan, seed);
  const std::vector<int> devices = {0, 1};
  const check::CaseResult r = JudgeAssembled(c, plan, host, Decode(c, plan, host, seed, View(bufs, c, plan)), devices);
  const sut::RankObservation& o = r.observation.ranks[0];
  EXPECT_EQ(o.branch, sut::Branch::kError);
  EXPECT_EQ(o.error, plan.ranks[0].error);
  EXPECT_EQ(o.n, 8);
  EXPECT_EQ(r.observation.ranks[1].branch, host.ranks[1].branch);
  EXPECT_TRUE(r.observation.ranks[1].error.empty());
  EXPECT_FALSE(r.PassesOrKnown());
}

// A wrong value outside the captured rows fails the case at its rank.
TEST(AssembleObservationTest, AnUnseenWrongValueIsARowsViolationAtItsRank) {
  auto [c, seed, host, plan] = PlanCase(SpecEager());
  auto bufs = CorrectReadback(c, plan, seed);
  bufs[3][static_cast<size_t>((3 * plan.num_layers + plan.layer) * plan.top_k + 2)] = 7;
  const std::vector<int> devices = {0, 1, 0, 1};
  check::CaseResult r = JudgeAssembled(c, plan, host, Decode(c, plan, host, seed, View(bufs, c, plan)), devices);
  ASSERT_EQ(r.verdict.violations.size(), 1u);
  const check::Violation& v = r.verdict.violations[0];
  EXPECT_EQ(v.invariant, check::Invariant::kRowsExact);
  EXPECT_EQ(v.dp, 1);
  EXPECT_EQ(v.tp, 1);
  EXPECT_EQ(v.message, "gpu: 1 wrong values in the capturer buffer, first at row 3 layer 0 k 2: "
                       "got 7, expected " + std::to_string(kUnwritten));
  ASSERT_EQ(r.explained.size(), 1u);
  EXPECT_EQ(r.explained[0], nullptr);
  EXPECT_FALSE(r.PassesOrKnown());
  r.observation.device->mode = "emulated on 1 GPU";
  EXPECT_EQ(DeviceLine(r.observation),
            "gpu: emulated on 1 GPU, 1 step(s), " +
                std::to_string(r.observation.device->values_checked) +
                             " values checked, 1 wrong; first mismatch: rank dp=1 tp=1 row 3 "
                             "layer 0 k 2: got 7, expected " + std::to_string(kUnwritten) + "\n");
}

// FNV-1a (64-bit) of the case's printed text, checked against a reference
// that passes the FNV test vectors.
uint64_t Fnv1a64(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

TEST(FillTest, CaseSeedIsFnv1aOfThePrintedCase) {
  ASSERT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  ASSERT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  ASSERT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
  for (const Case& c : {SpecEager(), Dp2Ragged(1), Dp2Ragged(3)}) {
    EXPECT_EQ(CaseSeed(c), Fnv1a64(PrintCase(c))) << PrintCase(c);
  }
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
