// The device's fold of a capturing rank's rows (r3/gpu/fold.h), compiled
// for the host: on every kind of lookup the device writes, a chunk's fold is
// the host decode of the same rows, or it hands the chunk back to the host.
// Runs in CPU-only CI (no exit 77).
#include "r3/gpu/fold.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/fill.h"
#include "r3/gpu/plan.h"
#include "r3/sut/sut.h"

namespace r3::gpu {
namespace {

// DP2 with 700 and 500 tokens: each rank captures hundreds of rows.
Case TwoLongDpRanks() {
  return ParseCase(
      "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 2048\n"
      "top_k 2\nnum_experts 64\nnum_layers 3\ntokens 700 500\n",
      "test");
}

// What the device's lookups may say of a rank's rows, by pattern.
enum class Lookups { kAllModel, kLayerStride, kRandom, kRandomWithAsks, kScattered };

std::vector<int64_t> MakeLookups(Lookups kind, const Case& c, int64_t dp, int64_t rows,
                                 uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t real = c.step.padded[static_cast<size_t>(dp)];
  std::vector<int64_t> found;
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t other_dp = static_cast<int64_t>(rng() % 2);
    const int64_t other_token =
        static_cast<int64_t>(rng() % static_cast<uint32_t>(c.step.padded[static_cast<size_t>(other_dp)]));
    switch (kind) {
      case Lookups::kAllModel:
        found.push_back(row < real ? kModelRow : kNoStepRow);
        break;
      case Lookups::kLayerStride:  // every other row the next real row, padding between
        found.push_back(row % 2 == 0 && row / 2 < real ? PackedRow(dp, row / 2) : kNoStepRow);
        break;
      case Lookups::kRandom:
      case Lookups::kRandomWithAsks: {
        const uint32_t pick = rng() % 16;
        if (kind == Lookups::kRandomWithAsks && pick == 0) {
          found.push_back(kAskTheHost);
        } else if (pick < 10 && row < real) {
          found.push_back(kModelRow);
        } else if (pick < 13) {
          found.push_back(kNoStepRow);
        } else {
          found.push_back(PackedRow(other_dp, other_token));
        }
        break;
      }
      case Lookups::kScattered:  // a row of the step at random: runs of one row
        found.push_back(PackedRow(other_dp, other_token));
        break;
    }
  }
  return found;
}

TEST(FoldTest, EachChunksFoldIsTheHostsDecodeOrGoesBackToTheHost) {
  const Case c = TwoLongDpRanks();
  const uint64_t seed = CaseSeed(c);
  const sut::Observation host = sut::RunSut(c, {});
  const Plan plan = BuildPlan(c, host, {}, seed);
  const RowIndex index(c, seed, plan.id_space);
  int64_t folded = 0, handed_back = 0, checked = 0;
  for (size_t rank = 0; rank < plan.ranks.size(); ++rank) {
    const RankPlan& r = plan.ranks[rank];
    if (!r.capture) continue;
    ASSERT_TRUE(ClaimIsModelPrefix(host.ranks[rank].captured, r.dp,
                                   c.step.padded[static_cast<size_t>(r.dp)]));
    const int64_t rows = CaptureRowsOf(plan, rank, ReadbackRows(plan, c, rank));
    ASSERT_GT(rows, 300);
    // The values are read only for rows left to the host, whose chunks the
    // fold hands back: any values do.
    const std::vector<int32_t> values(static_cast<size_t>(rows * plan.top_k), 0);
    for (const Lookups kind : {Lookups::kAllModel, Lookups::kLayerStride, Lookups::kRandom,
                               Lookups::kRandomWithAsks, Lookups::kScattered}) {
      for (const uint32_t lookup_seed : {1u, 2u, 3u}) {
        const std::vector<int64_t> found = MakeLookups(kind, c, r.dp, rows, lookup_seed);
        const CaptureRows capture{values.data(), rows, found.data()};
        const RowRuns whole = DecodeRankRows(c, plan, host, index, rank, capture, 0, rows);
        for (const int64_t chunk : {int64_t{1024}, int64_t{97}, int64_t{8}}) {
          RowRuns joined;
          for (int64_t first = 0; first < rows; first += chunk) {
            const int64_t last = std::min(rows, first + chunk);
            const RowRuns decoded = DecodeRankRows(c, plan, host, index, rank, capture, first, last);
            std::vector<RowRun> out(kFoldRuns);
            const int64_t count =
                FoldFoundRows(found.data(), first, last, r.dp, out.data(), kFoldRuns);
            ++checked;
            if (count == kHostDecodes) {
              ++handed_back;
              // Only for a row the host must look up, or too many runs.
              const bool asks = std::find(found.begin() + first, found.begin() + last,
                                          kAskTheHost) != found.begin() + last;
              EXPECT_TRUE(asks || static_cast<int64_t>(decoded.size()) > kFoldRuns)
                  << "rows [" << first << ", " << last << ") fold into " << decoded.size();
              AppendRuns(joined, decoded);
              continue;
            }
            ++folded;
            const RowRuns runs(out.begin(), out.begin() + count);
            EXPECT_EQ(runs, decoded) << "rows [" << first << ", " << last << ")";
            AppendRuns(joined, runs);
          }
          EXPECT_EQ(joined, whole) << "chunks of " << chunk;
        }
      }
    }
  }
  // Both outcomes were seen, over many chunks.
  EXPECT_GT(folded, 100);
  EXPECT_GT(handed_back, 10);
  EXPECT_GT(checked, folded);
}

// A layer-stride capture (a row, padding, the next row, ...) is one spaced
// run however long: it folds on the device.
TEST(FoldTest, ASpacedCaptureFoldsIntoOneRun) {
  std::vector<int64_t> found;
  for (int64_t row = 0; row < 1024; ++row) {
    found.push_back(row % 2 == 0 ? PackedRow(/*dp=*/1, 10 + row / 2) : kNoStepRow);
  }
  std::vector<RowRun> out(kFoldRuns);
  ASSERT_EQ(FoldFoundRows(found.data(), 0, 1024, /*model_dp=*/0, out.data(), kFoldRuns), 2);
  EXPECT_EQ(out[0], (RowRun{1, 10, 512, 1, 1}));
  EXPECT_EQ(out[1], (RowRun{RowRun::kPad, 0, 1}));
}

// More runs than the fold holds hand the chunk back, whatever the rest.
TEST(FoldTest, RunsBeyondTheCapacityHandTheChunkBack) {
  std::vector<int64_t> found;
  for (int64_t row = 0; row < 40; ++row) found.push_back(PackedRow(row % 3, (row * 7) % 11));
  std::vector<RowRun> out(4);
  EXPECT_EQ(FoldFoundRows(found.data(), 0, 40, /*model_dp=*/0, out.data(), 4), kHostDecodes);
  EXPECT_EQ(FoldFoundRows(found.data(), 0, 2, /*model_dp=*/0, out.data(), 4), 2);
}

TEST(FoldTest, ARowLeftToTheHostHandsTheChunkBack) {
  const std::vector<int64_t> found = {kModelRow, kModelRow, kAskTheHost, kModelRow};
  std::vector<RowRun> out(kFoldRuns);
  EXPECT_EQ(FoldFoundRows(found.data(), 0, 4, /*model_dp=*/0, out.data(), kFoldRuns),
            kHostDecodes);
  ASSERT_EQ(FoldFoundRows(found.data(), 0, 2, /*model_dp=*/3, out.data(), kFoldRuns), 1);
  EXPECT_EQ(out[0], (RowRun{3, 0, 2}));
  // The model's rows are the rows at their own index.
  ASSERT_EQ(FoldFoundRows(found.data(), 3, 4, /*model_dp=*/3, out.data(), kFoldRuns), 1);
  EXPECT_EQ(out[0], (RowRun{3, 3, 1}));
}

TEST(ClaimIsModelPrefixTest, OnlyTheRanksOwnRowsAtTheirIndexBelowItsRealRows) {
  EXPECT_TRUE(ClaimIsModelPrefix({}, /*dp=*/1, /*real=*/5));
  EXPECT_TRUE(ClaimIsModelPrefix({{1, 0, 5}}, 1, 5));
  EXPECT_TRUE(ClaimIsModelPrefix({{1, 0, 3}, {RowRun::kPad, 0, 4}}, 1, 5));
  EXPECT_TRUE(ClaimIsModelPrefix({{RowRun::kPad, 0, 2}, {1, 2, 3}}, 1, 5));
  EXPECT_FALSE(ClaimIsModelPrefix({{1, 0, 6}}, 1, 5));          // past its real rows
  EXPECT_FALSE(ClaimIsModelPrefix({{0, 0, 3}}, 1, 5));          // another DP rank's
  EXPECT_FALSE(ClaimIsModelPrefix({{1, 1, 3}}, 1, 5));          // not at their index
  EXPECT_FALSE(ClaimIsModelPrefix({{1, 0, 3, 1, 1}}, 1, 9));    // spaced
  EXPECT_FALSE(ClaimIsModelPrefix({{1, 0, 3, 2}}, 1, 9));       // strided
  EXPECT_FALSE(ClaimIsModelPrefix({{1, 0, 2}, {RowRun::kPad, 0, 1}, {1, 2, 1}}, 1, 9));
}

}  // namespace
}  // namespace r3::gpu
