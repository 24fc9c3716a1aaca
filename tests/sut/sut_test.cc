// The spec's section 7 worked examples through the host SUTs: which branch
// each rank takes and which rows it copies.
#include "r3/sut/sut.h"

#include <gtest/gtest.h>

#include "tests/testing/test_case.h"

namespace r3::sut {
namespace {

using ::r3::testing::CaseSpec;
using ::r3::testing::MakeCase;

const RankObservation& At(const Observation& obs, int64_t dp, int64_t tp, int64_t tp_size = 2) {
  return obs.ranks.at(static_cast<size_t>(dp * tp_size + tp));
}

std::string Captured(const Observation& obs, int64_t dp, int64_t tp, int64_t tp_size = 2) {
  const RankObservation& r = At(obs, dp, tp, tp_size);
  return r.error.empty() ? DescribeRuns(r.captured) : r.error;
}

TEST(SutTest, EagerStepTakesEpSpShardsAfterTheFix) {
  const Observation obs = RunSut(MakeCase({.tokens = {5, 3}}), {});
  EXPECT_EQ(*obs.local_sizes, (std::vector<int64_t>{3, 3, 2, 2}));
  for (int64_t t = 0; t < 2; ++t) {
    EXPECT_EQ(At(obs, 0, t).n, 10);
    EXPECT_EQ(At(obs, 0, t).branch, Branch::kEpSpShards);
    EXPECT_EQ(Captured(obs, 0, t), "dp0[0..5)");
    EXPECT_EQ(Captured(obs, 1, t), "dp1[0..3)");  // gathered rows [6, 9)
  }
}

TEST(SutTest, EagerStepRaisedBeforeTheFix) {
  const Observation obs = RunSut(MakeCase({.tokens = {5, 3}}), {.version = Version::kPre50874});
  for (const RankObservation& r : obs.ranks) {
    EXPECT_EQ(r.branch, Branch::kError);
    EXPECT_NE(r.error.find("unexpected topk_ids batch dim 10"), std::string::npos) << r.error;
    EXPECT_TRUE(r.captured.empty());
  }
}

TEST(SutTest, WarmupOverflowsTheLegacyBufferOnly) {
  const Case warmup = MakeCase({.tokens = {8192, 8192}});
  const Observation legacy = RunSut(warmup, {.policy = Policy::kLegacy});
  EXPECT_EQ(legacy.replay_rows, 8192);
  EXPECT_EQ(legacy.kernel_rows, 16384);
  EXPECT_EQ(At(legacy, 0, 0).replay_error,
            "ValueError: Routing replay buffer was initialized for 8192 tokens on cuda:0, but "
            "the kernel received 16384 tokens on cuda:0.");
  const Observation fixed = RunSut(warmup, {});
  EXPECT_EQ(fixed.replay_rows, 32768);
  EXPECT_TRUE(At(fixed, 1, 1).replay_error.empty());
}

TEST(SutTest, PolicyRowsFollowTheSpec) {
  const Config config = MakeCase({.tokens = {}}).config;
  EXPECT_EQ(ReplayBufferRows(config, Policy::kLegacy, {}), 8192);
  EXPECT_EQ(ReplayBufferRows(config, Policy::kPr50874, {}), 32768);
  EXPECT_EQ(ReplayBufferRows(config, Policy::kTight, {}), 16384);
  Config no_ep = config;
  no_ep.ep = false;
  EXPECT_EQ(ReplayBufferRows(no_ep, Policy::kPr50874, {}), 16384);  // D*M, not max(D, E)*M
  EXPECT_EQ(ReplayBufferRows(config, Policy::kPr50874, MutantSet(Mutant::kSizeByDpWithEp)), 16384);
}

TEST(SutTest, GraphDecodeTakesRowZeroAndRowTwo) {
  const Observation obs = RunSut(MakeCase({.tokens = {1, 1}}), {});
  EXPECT_EQ(At(obs, 0, 1).branch, Branch::kEpSpShards);
  EXPECT_EQ(Captured(obs, 0, 1), "dp0[0..1)");
  EXPECT_EQ(Captured(obs, 1, 0), "dp1[0..1)");
}

TEST(SutTest, GraphSizeEightTakesNaiveDp) {
  const Observation obs = RunSut(MakeCase({.tokens = {5, 3}, .padded = {8, 8}}), {});
  EXPECT_EQ(At(obs, 1, 0).n, 16);
  EXPECT_EQ(At(obs, 1, 0).branch, Branch::kNaiveDp);
  EXPECT_EQ(Captured(obs, 0, 1), "dp0[0..8)");
  EXPECT_EQ(Captured(obs, 1, 1), "dp1[0..8)");
}

TEST(SutTest, InternalDispatchWithSpGathersOverTp) {
  const Observation obs = RunSut(MakeCase({.dispatch = Dispatch::kInternal, .tokens = {5, 3}}), {});
  EXPECT_EQ(At(obs, 0, 0).n, 3);
  EXPECT_EQ(At(obs, 1, 1).n, 2);
  for (int64_t t = 0; t < 2; ++t) {
    EXPECT_EQ(At(obs, 0, t).branch, Branch::kSpTpGather);
    EXPECT_EQ(Captured(obs, 0, t), "dp0[0..5)");
    EXPECT_EQ(Captured(obs, 1, t), "dp1[0..3)");
  }
}

TEST(SutTest, NonSpNaiveTakesNaiveDp) {
  const Observation obs = RunSut(MakeCase({.ep = false, .tokens = {5, 3}}), {});
  EXPECT_EQ(At(obs, 0, 0).n, 8);
  EXPECT_EQ(At(obs, 0, 0).branch, Branch::kNaiveDp);
  EXPECT_EQ(Captured(obs, 0, 1), "dp0[0..5)");
  EXPECT_EQ(Captured(obs, 1, 0), "dp1[0..3)");  // gathered rows [5, 8)
}

TEST(SutTest, DecodeUnderInternalSpLetsTpOneCapturePadding) {
  // The known finding internal-sp-decode-pad, pinned at the SUT level.
  const Observation obs = RunSut(MakeCase({.dispatch = Dispatch::kInternal, .tokens = {1, 1}}), {});
  EXPECT_EQ(At(obs, 0, 0).branch, Branch::kLocal);
  EXPECT_EQ(Captured(obs, 0, 0), "dp0[0..1)");
  EXPECT_EQ(Captured(obs, 0, 1), "pad1");
}

TEST(SutTest, SingleDpRankTakesNoDp) {
  const Observation obs = RunSut(MakeCase({.dp = 1, .tp = 1, .ep = false, .tokens = {3},
                                           .padded = {4}}),
                                 {});
  EXPECT_EQ(At(obs, 0, 0, 1).branch, Branch::kNoDp);
  EXPECT_EQ(Captured(obs, 0, 0, 1), "dp0[0..4)");  // dummy graph rows are captured too
  EXPECT_FALSE(obs.local_sizes.has_value());
}

TEST(SutTest, SnapshotDtypeNarrowsByExpertCount) {
  EXPECT_EQ(RunSut(MakeCase({.tokens = {1, 1}, .num_experts = 256}), {}).snapshot_dtype, "uint8");
  EXPECT_EQ(RunSut(MakeCase({.tokens = {1, 1}, .num_experts = 257}), {}).snapshot_dtype, "uint16");
  EXPECT_EQ(RunSut(MakeCase({.tokens = {1, 1}, .num_experts = 65536}), {}).snapshot_dtype,
            "uint16");
  EXPECT_EQ(RunSut(MakeCase({.tokens = {1, 1}, .num_experts = 65537}), {}).snapshot_dtype,
            "int32");
}

TEST(SutTest, CatalogueNamesResolve) {
  EXPECT_EQ(FindSut("vllm-post-50874"), Version::kPost50874);
  EXPECT_EQ(FindSut("vllm-pre-50874"), Version::kPre50874);
  EXPECT_FALSE(FindSut("vllm").has_value());
  EXPECT_EQ(FindPolicy("tight"), Policy::kTight);
  EXPECT_FALSE(FindPolicy("huge").has_value());
}

}  // namespace
}  // namespace r3::sut

// The slice of topk_ids each rank copied, which the GPU path replays on real
// data: pinned on the host so a wrong slice fails without a GPU.
namespace r3::sut {
namespace {

TEST(SutCaptureSliceTest, EagerStepSlicesTheGatheredBatch) {
  const Observation obs = RunSut(::r3::testing::MakeCase({.tokens = {5, 3}}), {});
  EXPECT_EQ(obs.ranks[0].capture_start, 0);
  EXPECT_EQ(obs.ranks[0].capture_end, 5);
  EXPECT_EQ(obs.ranks[3].capture_start, 6);  // DP1's rows sit after DP0's 6 (5 + 1 pad)
  EXPECT_EQ(obs.ranks[3].capture_end, 9);
}

TEST(SutCaptureSliceTest, SpTpGatherSlicesTheTpGatheredRows) {
  const Observation obs = RunSut(
      ::r3::testing::MakeCase({.dispatch = Dispatch::kInternal, .tokens = {5, 3}}), {});
  EXPECT_EQ(obs.ranks[1].branch, Branch::kSpTpGather);
  EXPECT_EQ(obs.ranks[1].capture_start, 0);
  EXPECT_EQ(obs.ranks[1].capture_end, 5);
  EXPECT_EQ(obs.ranks[2].capture_end, 3);
}

TEST(SutCaptureSliceTest, NothingCapturedIsAnEmptySliceAtZero) {
  const Observation obs = RunSut(::r3::testing::MakeCase({.tokens = {0, 3}}), {});
  EXPECT_EQ(obs.ranks[0].capture_start, 0);
  EXPECT_EQ(obs.ranks[0].capture_end, 0);
}

}  // namespace
}  // namespace r3::sut

// Exact edges of the SUT's arithmetic: the snapshot dtype's largest id, the
// replay buffer's check, the seeded bugs' slices and the capturer's bound.
namespace r3::sut {
namespace {

using ::r3::testing::MakeCase;

std::string CapturedAt(const Observation& obs, size_t index) {
  const RankObservation& r = obs.ranks.at(index);
  return r.error.empty() ? DescribeRuns(r.captured) : r.error;
}

TEST(SutEdgeTest, TheCatalogueHoldsExactlyTheTwoHostSuts) {
  ASSERT_EQ(SutCatalogue().size(), 2u);
  EXPECT_EQ(SutCatalogue()[0].name, "vllm-post-50874");
  EXPECT_EQ(SutCatalogue()[1].name, "vllm-pre-50874");
  EXPECT_FALSE(FindSut("").has_value());
}

TEST(SutEdgeTest, SnapshotMaxIdIsTheLargestValueOfItsDtype) {
  const auto max_id = [](int64_t experts) {
    return RunSut(MakeCase({.tokens = {1, 1}, .num_experts = experts}), {}).snapshot_max_id;
  };
  EXPECT_EQ(max_id(256), 255);
  EXPECT_EQ(max_id(257), 65535);
  EXPECT_EQ(max_id(65536), 65535);
  EXPECT_EQ(max_id(65537), 2147483647);
  const Observation int8 = RunSut(MakeCase({.tokens = {1, 1}, .num_experts = 256}),
                                  {.mutants = MutantSet(Mutant::kSnapshotInt8)});
  EXPECT_EQ(int8.snapshot_dtype, "int8");
  EXPECT_EQ(int8.snapshot_max_id, 127);
}

TEST(SutEdgeTest, ReplayBufferCheckFailsOnlyPastItsRows) {
  // Legacy sizing holds M = 8192 rows; the eager SP step hands the kernel
  // the sum of local_sizes.
  const Observation full = RunSut(MakeCase({.tokens = {4096, 4096}}), {.policy = Policy::kLegacy});
  ASSERT_EQ(full.replay_rows, 8192);
  ASSERT_EQ(At(full, 0, 0).n, 8192);
  for (const RankObservation& r : full.ranks) EXPECT_EQ(r.replay_error, "");
  const Observation over = RunSut(MakeCase({.tokens = {4096, 4097}}), {.policy = Policy::kLegacy});
  ASSERT_EQ(At(over, 0, 0).n, 8194);
  EXPECT_NE(At(over, 0, 0).replay_error, "");
}

TEST(SutEdgeTest, NaiveDpEndOffByOneShiftsEachSliceBackOneRow) {
  const Observation obs = RunSut(MakeCase({.tokens = {5, 3}, .padded = {8, 8}}),
                                 {.mutants = MutantSet(Mutant::kNaiveDpEndOffByOne)});
  EXPECT_EQ(At(obs, 0, 0).branch, Branch::kNaiveDp);
  EXPECT_EQ(Captured(obs, 0, 0), "dp0[0..7)");           // rows [-1, 7), clamped at 0
  EXPECT_EQ(Captured(obs, 1, 1), "dp0[7..8) dp1[0..7)");  // rows [7, 15)
  EXPECT_EQ(At(obs, 1, 1).capture_start, 7);
  EXPECT_EQ(At(obs, 1, 1).capture_end, 15);
}

TEST(SutEdgeTest, NoSpTrimCopiesTheWholeShardGroupOfAMiddleRank) {
  // Three DP ranks so that a slice past DP rank 1's shard group is not
  // clamped away by the end of the gathered batch.
  const Observation obs = RunSut(MakeCase({.dp = 3, .tokens = {5, 3, 1}}),
                                 {.mutants = MutantSet(Mutant::kNoSpTrim)});
  EXPECT_EQ(*obs.local_sizes, (std::vector<int64_t>{3, 3, 2, 2, 1, 1}));
  EXPECT_EQ(Captured(obs, 0, 0), "dp0[0..5) pad1");
  EXPECT_EQ(Captured(obs, 1, 1), "dp1[0..3) pad1");  // gathered rows [6, 10)
  EXPECT_EQ(At(obs, 1, 1).capture_start, 6);
  EXPECT_EQ(At(obs, 1, 1).capture_end, 10);
  EXPECT_EQ(Captured(obs, 2, 0), "dp2[0..1) pad1");
}

TEST(SutEdgeTest, ACaptureLargerThanTheCapturerBufferIsAnError) {
  // capturer-rows-per-shard sizes the buffer ceil(M / TP) = 4 rows: DP rank
  // 0's 5 rows overflow it, DP rank 1's 3 rows fit.
  const Observation obs =
      RunSut(MakeCase({.max_num_batched_tokens = 8, .tokens = {5, 3}}),
             {.mutants = MutantSet(Mutant::kCapturerRowsPerShard)});
  ASSERT_EQ(obs.capturer_rows, 4);
  for (int64_t t = 0; t < 2; ++t) {
    EXPECT_EQ(At(obs, 0, t).branch, Branch::kError);
    EXPECT_EQ(At(obs, 0, t).error, "IndexError: capture of 5 rows into a capturer buffer of 4 rows");
    EXPECT_TRUE(At(obs, 0, t).captured.empty());
    EXPECT_EQ(At(obs, 1, t).branch, Branch::kEpSpShards);
    EXPECT_EQ(Captured(obs, 1, t), "dp1[0..3)");
  }
}

TEST(SutEdgeTest, CaptureStartIsTheSliceStartUnlessNothingWasCaptured) {
  // DP rank 1 with no tokens: an empty slice at 4 reads as [0, 0).
  const Observation empty = RunSut(MakeCase({.tokens = {3, 0}}), {});
  EXPECT_EQ(CapturedAt(empty, 2), "(no rows)");
  EXPECT_EQ(empty.ranks[2].capture_start, 0);
  EXPECT_EQ(empty.ranks[2].capture_end, 0);
  // One row captured: its slice starts where it was taken, at gathered row 2.
  const Observation one = RunSut(MakeCase({.tokens = {1, 1}}), {});
  EXPECT_EQ(CapturedAt(one, 2), "dp1[0..1)");
  EXPECT_EQ(one.ranks[2].capture_start, 2);
  EXPECT_EQ(one.ranks[2].capture_end, 3);
}

}  // namespace
}  // namespace r3::sut
