#include "r3/model/sizing.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "r3/case/limits.h"
#include "r3/model/layout.h"
#include "tests/testing/test_case.h"

namespace r3::model {
namespace {

// Every N with 0 <= N[d] <= M (tokens = N; real counts do not change the
// layout), the largest kernel input any rank sees.
int64_t BruteForceBound(const Config& config) {
  const int64_t m = config.max_num_batched_tokens;
  std::vector<int64_t> n(static_cast<size_t>(config.dp), 0);
  int64_t best = 0;
  while (true) {
    Case c{config, {n, n}};
    best = std::max(best, BuildLayout(c).kernel_rows);
    size_t d = 0;
    while (d < n.size() && n[d] == m) n[d++] = 0;
    if (d == n.size()) break;
    ++n[d];
  }
  return best;
}

TEST(SizingTest, ClosedFormMatchesBruteForceOnSmallConfigurations) {
  int checked = 0;
  for (int64_t dp = 1; dp <= 3; ++dp) {
    for (int64_t tp = 1; tp <= 4; ++tp) {
      for (int64_t m = 1; m <= 7; ++m) {
        for (bool ep : {false, true}) {
          for (Dispatch dispatch : {Dispatch::kNaive, Dispatch::kInternal}) {
            for (SpMode sp : {SpMode::kAuto, SpMode::kOff}) {
              Config config = testing::MakeCase({.dp = dp, .tp = tp, .ep = ep,
                                                 .dispatch = dispatch, .sp = sp,
                                                 .max_num_batched_tokens = m, .tokens = {}})
                                  .config;
              EXPECT_EQ(RequiredReplayRows(config), BruteForceBound(config))
                  << "dp=" << dp << " tp=" << tp << " m=" << m << " ep=" << ep
                  << " dispatch=" << DispatchName(dispatch) << " sp=" << SpModeName(sp);
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 3 * 4 * 7 * 8);
}

TEST(SizingTest, SpecExampleNeedsTwiceTheLegacyBuffer) {
  const Config config = testing::MakeCase({.tokens = {}}).config;
  EXPECT_EQ(RequiredReplayRows(config), 16384);
}

TEST(SizingTest, TpNotDividingMNeedsMoreThanDpTimesM) {
  const Config config = testing::MakeCase({.max_num_batched_tokens = 7, .tokens = {}}).config;
  EXPECT_EQ(RequiredReplayRows(config), 16);  // 2 * 2 * cdiv(7, 2)
}

TEST(SizingTest, LargestConfigurationDoesNotOverflow) {
  const Config config = testing::MakeCase({.dp = kMaxDp, .tp = kMaxTp,
                                           .max_num_batched_tokens = kMaxBatchedTokens - 1,
                                           .tokens = {}})
                            .config;
  EXPECT_EQ(RequiredReplayRows(config), kMaxDp * kMaxTp * ((kMaxBatchedTokens - 1 + 63) / 64));
}

}  // namespace
}  // namespace r3::model
