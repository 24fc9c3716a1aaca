#include "r3/case/rows.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "r3/case/checked_math.h"

namespace r3 {
namespace {

TEST(RowsTest, AppendMergesContiguousRunsAndDropsEmptyOnes) {
  RowRuns runs;
  AppendRun(runs, {/*dp=*/0, /*first=*/0, /*count=*/3});
  AppendRun(runs, {/*dp=*/0, /*first=*/3, /*count=*/2});
  AppendRun(runs, {RowRun::kPad, 0, 0});
  AppendRun(runs, {RowRun::kPad, 0, 1});
  AppendRun(runs, {RowRun::kPad, 7, 1});  // pad rows have no index: merged
  AppendRun(runs, {/*dp=*/0, /*first=*/6, /*count=*/1});  // not contiguous with 0..5
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0], (RowRun{0, 0, 5}));
  EXPECT_EQ(runs[1], (RowRun{RowRun::kPad, 0, 2}));
  EXPECT_EQ(runs[2], (RowRun{0, 6, 1}));
  EXPECT_EQ(TotalRows(runs), 8);
  EXPECT_EQ(DescribeRuns(runs), "dp0[0..5) pad2 dp0[6..7)");
}

// Code that fills in only some fields (RowRun{.dp = d}) relies on these.
TEST(RowsTest, DefaultRunIsAnEmptyPaddingRunStartingAtZero) {
  const RowRun run;
  EXPECT_TRUE(run.is_pad());
  EXPECT_EQ(run.first, 0);
  EXPECT_EQ(run.count, 0);
  EXPECT_EQ((RowRun{.dp = 3}), (RowRun{3, 0, 0}));
}

TEST(RowsTest, SliceCutsRunsAndKeepsTokenIndices) {
  RowRuns runs;
  AppendRun(runs, {0, 0, 3});
  AppendRun(runs, {RowRun::kPad, 0, 1});
  AppendRun(runs, {1, 0, 4});
  const RowTensor tensor(runs);
  EXPECT_EQ(tensor.rows(), 8);
  EXPECT_EQ(DescribeRuns(tensor.Slice(2, 6)), "dp0[2..3) pad1 dp1[0..2)");
  EXPECT_EQ(DescribeRuns(tensor.Slice(5, 8)), "dp1[1..4)");
  EXPECT_EQ(DescribeRuns(tensor.Slice(0, 100)), DescribeRuns(runs));  // clamped
  EXPECT_TRUE(tensor.Slice(4, 4).empty());
  EXPECT_TRUE(tensor.Slice(6, 2).empty());
  EXPECT_TRUE(tensor.Slice(-3, 0).empty());
}

TEST(RowsTest, SliceAgreesWithRowByRowExpansion) {
  RowRuns runs;
  for (int64_t d = 0; d < 5; ++d) {
    AppendRun(runs, {d, 0, d + 1});
    AppendRun(runs, {RowRun::kPad, 0, d % 2});
  }
  const RowTensor tensor(runs);
  std::vector<std::pair<int64_t, int64_t>> rows;  // (dp, token) per row
  for (const RowRun& run : runs) {
    for (int64_t i = 0; i < run.count; ++i) rows.emplace_back(run.dp, run.is_pad() ? 0 : run.first + i);
  }
  for (int64_t start = 0; start <= tensor.rows(); ++start) {
    for (int64_t end = start; end <= tensor.rows(); ++end) {
      RowRuns expected;
      for (int64_t i = start; i < end; ++i) AppendRun(expected, {rows[i].first, rows[i].second, 1});
      EXPECT_EQ(tensor.Slice(start, end), expected) << start << ".." << end;
    }
  }
}

// SP shard sizes and the per-shard capturer mutant divide with CeilDiv; a
// negative batch or a zero TP size must be an error, never a division by zero.
TEST(CheckedMathTest, CeilDivRoundsUpAndRejectsNegativeDividendsAndNonPositiveDivisors) {
  EXPECT_EQ(CeilDiv(/*a=*/0, /*b=*/4), 0);
  EXPECT_EQ(CeilDiv(/*a=*/7, /*b=*/2), 4);
  EXPECT_EQ(CeilDiv(/*a=*/8, /*b=*/2), 4);
  EXPECT_THROW(CeilDiv(/*a=*/-1, /*b=*/2), std::invalid_argument);
  EXPECT_THROW(CeilDiv(/*a=*/5, /*b=*/0), std::invalid_argument);
  EXPECT_THROW(CeilDiv(/*a=*/5, /*b=*/-2), std::invalid_argument);
}

}  // namespace
// A message lists the first runs and says how many more there are.
TEST(RowsTest, ALongRunListIsCutWithWhatIsLeft) {
  RowRuns runs;
  for (int64_t i = 0; i < 5; ++i) AppendRun(runs, {0, 2 * i, 1});
  EXPECT_EQ(DescribeRuns(runs, 2), "dp0[0..1) dp0[2..3) ... and 3 more runs (3 rows)");
  EXPECT_EQ(DescribeRuns(runs, 5), DescribeRuns(runs));
  EXPECT_EQ(DescribeRuns(runs, 9), DescribeRuns(runs));
  EXPECT_EQ(DescribeRuns({}, 2), "(no rows)");
}

// An empty run adds nothing, also as the first of a list joined onto an
// empty one (an adapter may report a DP rank's empty capture that way).
TEST(RowsTest, JoiningAListThatStartsWithAnEmptyRunSkipsIt) {
  RowRuns runs;
  AppendRuns(runs, {{0, 0, 0}, {1, 0, 2}});
  EXPECT_EQ(runs, (RowRuns{{1, 0, 2}}));
  AppendRuns(runs, {{0, 0, 0}});
  EXPECT_EQ(runs, (RowRuns{{1, 0, 2}}));
}

}  // namespace r3
