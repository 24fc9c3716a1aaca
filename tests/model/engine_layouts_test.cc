// The layouts of other engines (docs/layouts.md): the padded all-gather,
// tensor_split, and SGLang's capture-then-slice with its buffer bound,
// against the worked examples and, for the bound, a brute force over every
// legal step of small servers.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "r3/model/ascend_layout.h"
#include "r3/model/padded_gather.h"
#include "r3/model/sglang_layout.h"

namespace r3::model {
namespace {

constexpr int64_t kPad = RowRun::kPad;

TEST(PaddedAllGatherTest, EachMemberIsPaddedToTheMostRowsInPlace) {
  // N = [5, 3]: 10 rows, DP1's rows at [5, 8), its pad rows 8-9 at the tail.
  const std::vector<RowRuns> members = {{{0, 0, 5}}, {{1, 0, 3}}};
  EXPECT_EQ(PaddedAllGather(members), (RowRuns{{0, 0, 5}, {1, 0, 3}, {kPad, 0, 2}}));
  // N = [3, 5]: the pad rows lie between the members, and DP1 starts at 5,
  // where a running sum of the sizes would say 3.
  const std::vector<RowRuns> flipped = {{{0, 0, 3}}, {{1, 0, 5}}};
  EXPECT_EQ(PaddedAllGather(flipped), (RowRuns{{0, 0, 3}, {kPad, 0, 2}, {1, 0, 5}}));
  const std::vector<int64_t> rows = {3, 5};
  EXPECT_EQ(PaddedMemberRows(rows, 1), (RowSlice{5, 5}));
  EXPECT_EQ(PaddedMemberRows(rows, 0), (RowSlice{0, 3}));
  EXPECT_THROW(PaddedMemberRows(rows, 2), std::out_of_range);
  EXPECT_THROW(PaddedMemberRows(std::vector<int64_t>{}, 0), std::out_of_range);
}

TEST(PaddedAllGatherTest, AnIdleMemberIsAllPaddingAndEqualMembersHaveNone) {
  const std::vector<RowRuns> idle = {{{0, 0, 2}}, {}, {{2, 0, 1}}};
  EXPECT_EQ(PaddedAllGather(idle),
            (RowRuns{{0, 0, 2}, {kPad, 0, 2}, {2, 0, 1}, {kPad, 0, 1}}));
  const std::vector<RowRuns> equal = {{{0, 0, 4}}, {{1, 0, 4}}};
  EXPECT_EQ(PaddedAllGather(equal), (RowRuns{{0, 0, 4}, {1, 0, 4}}));
  EXPECT_EQ(PaddedAllGather(std::vector<RowRuns>{}), RowRuns{});
  EXPECT_EQ(PaddedAllGather(std::vector<RowRuns>{{}, {}}), RowRuns{});  // an idle step
}

TEST(TensorSplitTest, TheFirstRemainderPartsHoldOneRowMore) {
  // T = 5 rows over tp 4: [2, 1, 1, 1], where vLLM's shards are 2 each
  // (8 rows, 3 of them padding).
  EXPECT_EQ(TensorSplitSizes(5, 4), (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_EQ(TensorSplitSizes(8, 4), (std::vector<int64_t>{2, 2, 2, 2}));
  EXPECT_EQ(TensorSplitSizes(2, 4), (std::vector<int64_t>{1, 1, 0, 0}));
  for (int64_t rows = 0; rows < 40; ++rows) {
    for (int64_t parts = 1; parts < 9; ++parts) {
      const std::vector<int64_t> sizes = TensorSplitSizes(rows, parts);
      int64_t sum = 0;
      for (const int64_t s : sizes) sum += s;
      EXPECT_EQ(sum, rows);
      EXPECT_LE(sizes.front() - sizes.back(), 1);
      EXPECT_TRUE(std::is_sorted(sizes.rbegin(), sizes.rend()));
    }
  }
}

// docs/layouts.md's SGLang example: D = 2, N = [5, 3].
TEST(SglangLayoutTest, EagerSumLenConcatenatesAndSlicesAtTheRunningSum) {
  const SglangStep step{{5, 3}, SglangGather::kSumLen};
  EXPECT_EQ(SglangGathered(step), (RowRuns{{0, 0, 5}, {1, 0, 3}}));
  EXPECT_EQ(SglangLocalRows(step, 0), (RowSlice{0, 5}));
  EXPECT_EQ(SglangLocalRows(step, 1), (RowSlice{5, 3}));
}

TEST(SglangLayoutTest, EagerMaxLenPadsEveryRankToTheLongest) {
  const SglangStep step{{3, 5}, SglangGather::kMaxLen};
  EXPECT_EQ(SglangGathered(step), (RowRuns{{0, 0, 3}, {kPad, 0, 2}, {1, 0, 5}}));
  EXPECT_EQ(SglangLocalRows(step, 1), (RowSlice{5, 5}));
}

TEST(SglangLayoutTest, ADecodeGraphPadsEveryRankToTheGraphBatch) {
  const SglangStep step{{5, 3}, SglangGather::kCudaGraph, /*graph_bs=*/8};
  EXPECT_EQ(SglangGathered(step), (RowRuns{{0, 0, 5}, {kPad, 0, 3}, {1, 0, 3}, {kPad, 0, 5}}));
  EXPECT_EQ(SglangLocalRows(step, 1), (RowSlice{8, 3}));
  // A verify step with 2 speculative tokens per request: blocks of 8 * 3.
  const SglangStep verify{{5, 3}, SglangGather::kCudaGraph, /*graph_bs=*/8,
                          /*tokens_per_request=*/3};
  EXPECT_EQ(SglangLocalRows(verify, 1), (RowSlice{24, 3}));
  EXPECT_EQ(TotalRows(SglangGathered(verify)), 48);
}

TEST(SglangLayoutTest, EveryRanksSliceHoldsExactlyItsRowsInEveryGather) {
  const std::vector<std::vector<int64_t>> steps = {{5, 3}, {0, 4}, {2, 2, 0, 7}, {1}};
  for (const std::vector<int64_t>& tokens : steps) {
    for (const SglangGather g :
         {SglangGather::kSumLen, SglangGather::kMaxLen, SglangGather::kCudaGraph}) {
      const SglangStep step{tokens, g, /*graph_bs=*/8};
      const RowRuns gathered = SglangGathered(step);
      for (size_t r = 0; r < tokens.size(); ++r) {
        const RowSlice s = SglangLocalRows(step, static_cast<int64_t>(r));
        RowRuns want;
        AppendRun(want, {static_cast<int64_t>(r), 0, tokens[r]});
        EXPECT_EQ(RowTensor(gathered).Slice(s.start, s.start + s.count), want)
            << "rank " << r << " gather " << static_cast<int>(g);
      }
    }
  }
}

// The most rows capture() writes over every legal step of a small server:
// eager steps with each rank at up to max(prefill chunk, running requests *
// tokens per request) tokens, concatenated or padded, and decode graphs of
// every batch size up to the running requests.
int64_t BruteForceRows(const SglangLimits& l) {
  const int64_t per_rank =
      std::max(l.chunked_prefill_size, l.max_running_requests * l.tokens_per_request);
  int64_t most = 0;
  std::vector<int64_t> tokens(static_cast<size_t>(l.dp), 0);
  while (true) {
    for (const SglangGather g : {SglangGather::kSumLen, SglangGather::kMaxLen}) {
      most = std::max(most, TotalRows(SglangGathered({tokens, g})));
    }
    size_t i = 0;
    while (i < tokens.size() && tokens[i] == per_rank) tokens[i++] = 0;
    if (i == tokens.size()) break;
    ++tokens[i];
  }
  for (int64_t bs = 1; bs <= l.max_running_requests; ++bs) {
    const SglangStep step{std::vector<int64_t>(static_cast<size_t>(l.dp), bs),
                          SglangGather::kCudaGraph, bs, l.tokens_per_request};
    most = std::max(most, TotalRows(SglangGathered(step)));
  }
  return most;
}

TEST(SglangSizingTest, TheBoundIsTheMostRowsOfAnyLegalStep) {
  for (int64_t dp = 1; dp <= 3; ++dp) {
    for (int64_t cps = 1; cps <= 4; ++cps) {
      for (int64_t mrr = 1; mrr <= 4; ++mrr) {
        for (int64_t w = 1; w <= 2; ++w) {
          const SglangLimits l{dp, cps, mrr, w};
          EXPECT_EQ(RequiredSglangRows(l), BruteForceRows(l))
              << "dp " << dp << " cps " << cps << " mrr " << mrr << " w " << w;
        }
      }
    }
  }
}

// sglang #23999: max(chunked_prefill_size * dp, max_running_requests) lacks
// the dp factor on its second term; with more running requests than the
// prefill chunk, decode on every rank overflows it. The fix (#26123),
// max(cps * dp, mrr * dp), is the bound without speculative tokens.
TEST(SglangSizingTest, ThePre26123SizeIsShortWhenDecodeOutgrowsThePrefillChunk) {
  const SglangLimits l{/*dp=*/2, /*chunked_prefill_size=*/4, /*max_running_requests=*/8};
  const int64_t before_fix = std::max(l.chunked_prefill_size * l.dp, l.max_running_requests);
  const int64_t after_fix =
      std::max(l.chunked_prefill_size * l.dp, l.max_running_requests * l.dp);
  EXPECT_EQ(RequiredSglangRows(l), 16);
  EXPECT_LT(before_fix, RequiredSglangRows(l));
  EXPECT_EQ(after_fix, RequiredSglangRows(l));
  // Speculative verify rows outgrow even the fixed size (SGLang's FIXME).
  const SglangLimits spec{2, 4, 8, /*tokens_per_request=*/3};
  EXPECT_GT(RequiredSglangRows(spec),
            std::max(spec.chunked_prefill_size * spec.dp, spec.max_running_requests * spec.dp));
}

RowRuns Own(int64_t dp, int64_t rows) {
  RowRuns out;
  AppendRun(out, {dp, 0, rows});
  return out;
}

// docs/layouts.md's vllm-ascend examples.
TEST(AscendLayoutTest, AllGatherIsPaddedAndTheCaptureTakesThePaddedBranch) {
  const std::vector<int64_t> tokens = {5, 3};
  const AscendStep step{tokens, /*tp=*/1, AscendComm::kAllGather};
  EXPECT_EQ(AscendKernelRows(step, 1, 0), (RowRuns{{0, 0, 5}, {1, 0, 3}, {kPad, 0, 2}}));
  const AscendCapture c = AscendCaptureRows(step, 1, 0);
  EXPECT_EQ(c.branch, AscendBranch::kPadded);
  EXPECT_EQ(c.rows, Own(1, 3));
  // Equal sizes: the gathered rows are the global batch, the first test.
  const std::vector<int64_t> equal = {4, 4};
  const AscendCapture e = AscendCaptureRows({equal, 1, AscendComm::kAllGather}, 1, 0);
  EXPECT_EQ(e.branch, AscendBranch::kGlobal);
  EXPECT_EQ(e.rows, Own(1, 4));
}

TEST(AscendLayoutTest, ARankOutsideTheStepIsRefused) {
  const std::vector<int64_t> tokens = {5, 3};
  const AscendStep step{tokens, /*tp=*/2, AscendComm::kAllToAll};
  EXPECT_THROW(AscendKernelRows(step, /*rank=*/0, /*tp_rank=*/2), std::out_of_range);
  EXPECT_THROW(AscendKernelRows(step, /*rank=*/2, /*tp_rank=*/0), std::out_of_range);
  EXPECT_THROW(AscendKernelRows(step, /*rank=*/-1, /*tp_rank=*/0), std::out_of_range);
  EXPECT_THROW(AscendCaptureRows(step, /*rank=*/0, /*tp_rank=*/-1), std::out_of_range);
}

TEST(AscendLayoutTest, SpShardsAreTensorSplitOrEqualChunksAndGatheredOverTp) {
  const std::vector<int64_t> tokens = {5, 3};
  const AscendStep a2a{tokens, /*tp=*/2, AscendComm::kAllToAll};
  EXPECT_EQ(AscendKernelRows(a2a, 0, 0), (RowRuns{{0, 0, 3}}));
  EXPECT_EQ(AscendKernelRows(a2a, 0, 1), (RowRuns{{0, 3, 2}}));
  const AscendStep mc2{tokens, /*tp=*/2, AscendComm::kMc2};
  // Chunks of cdiv(max N, tp) = 3: DP1's second chunk is all padding.
  EXPECT_EQ(AscendKernelRows(mc2, 1, 0), (RowRuns{{1, 0, 3}}));
  EXPECT_EQ(AscendKernelRows(mc2, 1, 1), (RowRuns{{kPad, 0, 3}}));
  const std::vector<int64_t> equal = {4, 4};
  const AscendStep mc2_equal{equal, /*tp=*/2, AscendComm::kMc2};
  for (const AscendStep& step : {a2a, mc2_equal}) {
    for (int64_t r = 0; r < 2; ++r) {
      for (int64_t t = 0; t < 2; ++t) {
        const AscendCapture c = AscendCaptureRows(step, r, t);
        EXPECT_EQ(c.branch, AscendBranch::kShard);
        EXPECT_EQ(c.rows, Own(r, step.tokens[static_cast<size_t>(r)]));
      }
    }
  }
}

// A shard whose row count happens to equal T is taken by the n == T test
// before the shard branch: TP rank 1 of a one-token DP rank stores its pad
// row. (Found by the model on vllm-ascend's branch order.)
TEST(AscendLayoutTest, AShardOfTRowsIsTakenForTheRanksOwnRows) {
  const std::vector<int64_t> tokens = {1, 2};
  for (const AscendComm comm : {AscendComm::kAllToAll, AscendComm::kMc2}) {
    const AscendStep step{tokens, /*tp=*/2, comm};
    const AscendCapture tp1 = AscendCaptureRows(step, 0, 1);
    EXPECT_EQ(tp1.branch, AscendBranch::kLocal);
    EXPECT_EQ(tp1.rows, (RowRuns{{kPad, 0, 1}}));
    EXPECT_NE(tp1.rows, Own(0, 1));
  }
  // Under MC2 a chunk is cdiv(max N, tp) rows: with N = [5, 3] and tp 2,
  // DP1's chunks are 3 rows, its T: TP rank 1 stores 3 pad rows.
  const std::vector<int64_t> ragged = {5, 3};
  const AscendCapture mc2 = AscendCaptureRows({ragged, /*tp=*/2, AscendComm::kMc2}, 1, 1);
  EXPECT_EQ(mc2.branch, AscendBranch::kLocal);
  EXPECT_EQ(mc2.rows, (RowRuns{{kPad, 0, 3}}));
}

// Over every step of up to 3 DP ranks of up to 4 tokens and tp up to 3:
// the all-gather is always captured right; an SP shard is captured right
// whenever the shard branch takes it, and only an earlier branch is wrong.
TEST(AscendLayoutTest, EveryRankIsRightUnlessAShardLooksLikeAnotherLayout) {
  int64_t wrong = 0;
  for (int64_t dp = 1; dp <= 3; ++dp) {
    std::vector<int64_t> tokens(static_cast<size_t>(dp), 0);
    while (true) {
      for (int64_t tp = 1; tp <= 3; ++tp) {
        for (const AscendComm comm :
             {AscendComm::kAllGather, AscendComm::kAllToAll, AscendComm::kMc2}) {
          const AscendStep step{tokens, comm == AscendComm::kAllGather ? 1 : tp, comm};
          for (int64_t r = 0; r < dp; ++r) {
            for (int64_t t = 0; t < step.tp; ++t) {
              const AscendCapture c = AscendCaptureRows(step, r, t);
              const bool right = c.rows == Own(r, tokens[static_cast<size_t>(r)]);
              if (comm == AscendComm::kAllGather || c.branch == AscendBranch::kShard) {
                EXPECT_TRUE(right) << "comm " << static_cast<int>(comm) << " rank " << r;
              }
              wrong += right ? 0 : 1;
            }
          }
        }
      }
      size_t i = 0;
      while (i < tokens.size() && tokens[i] == 4) tokens[i++] = 0;
      if (i == tokens.size()) break;
      ++tokens[i];
    }
  }
  EXPECT_GT(wrong, 0);  // the early branch above is among them
}

}  // namespace
}  // namespace r3::model
