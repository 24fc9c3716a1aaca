// The canonical form of RowRuns with strided and spaced runs (rows.h):
// however a row sequence reaches AppendRun (row by row, in runs of any stride
// and gap, or as sub-lists through AppendRuns), the result is one run list,
// the plain form with its single-row groups folded, so `==` on RowRuns still
// compares rows.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "r3/case/rows.h"
#include "r3/case/rows_json.h"

namespace r3 {
namespace {

struct Row {
  int64_t dp = RowRun::kPad;
  int64_t token = 0;
  friend bool operator==(const Row&, const Row&) = default;
};
using Rows = std::vector<Row>;

// Two ranks, padding and six tokens: strides, repeats, reversals and
// contiguity all turn up in short sequences.
rc::Gen<Rows> GenRows() {
  return rc::gen::container<Rows>(rc::gen::apply(
      [](int64_t dp, int64_t token) {
        return Row{dp, dp == RowRun::kPad ? 0 : token};
      },
      rc::gen::inRange<int64_t>(-1, 2), rc::gen::inRange<int64_t>(0, 6)));
}

// From the definition: a run's rows, a spaced run's padding between them.
Rows Expand(const RowRuns& runs) {
  Rows out;
  for (const RowRun& run : runs) {
    for (int64_t i = 0; i < run.count; ++i) {
      if (run.is_pad()) {
        out.push_back({});
        continue;
      }
      if (i > 0) out.insert(out.end(), static_cast<size_t>(run.gap), Row{});
      out.push_back({run.dp, run.first + i * run.stride});
    }
  }
  return out;
}

RowRuns RowByRow(const Rows& rows) {
  RowRuns out;
  for (const Row& row : rows) AppendRun(out, {row.dp, row.token, 1});
  return out;
}

// The references, written from the definitions and sharing no code with
// AppendRun. The plain form: contiguous rows merged, nothing else.
RowRuns ReferencePlain(const Rows& rows) {
  RowRuns out;
  for (const Row& row : rows) {
    if (!out.empty() && out.back().dp == row.dp &&
        (row.dp == RowRun::kPad || out.back().first + out.back().count == row.token)) {
      ++out.back().count;
    } else {
      out.push_back({row.dp, row.token, 1});
    }
  }
  return out;
}

// The canonical form: the plain form, then each maximal left-to-right group
// of >= 2 single-row runs of one rank at one token step, each two adjacent
// or each two apart by one padding run of one count, made a strided run
// (spaced by that count).
RowRuns ReferenceCanonical(const Rows& rows) {
  const RowRuns plain = ReferencePlain(rows);
  const auto single = [&plain](size_t at, int64_t dp) {
    return at < plain.size() && plain[at].dp == dp && plain[at].count == 1;
  };
  const auto pad = [&plain](size_t at, int64_t count) {
    return at < plain.size() && plain[at].is_pad() && (count < 0 || plain[at].count == count);
  };
  RowRuns out;
  for (size_t i = 0; i < plain.size();) {
    const RowRun& run = plain[i];
    if (run.is_pad() || run.count != 1) {
      out.push_back(run);
      ++i;
      continue;
    }
    // The next row of the group: adjacent, or past one padding run.
    const int64_t gap = pad(i + 1, -1) ? plain[i + 1].count : 0;
    const size_t hop = gap > 0 ? 2 : 1;
    if (!single(i + hop, run.dp)) {
      out.push_back(run);
      ++i;
      continue;
    }
    const int64_t step = plain[i + hop].first - run.first;
    size_t last = i + hop;
    int64_t count = 2;
    while ((gap == 0 || pad(last + 1, gap)) && single(last + hop, run.dp) &&
           plain[last + hop].first - plain[last].first == step) {
      last += hop;
      ++count;
    }
    out.push_back({run.dp, run.first, count, step, gap});
    i = last + 1;
  }
  return out;
}

RC_GTEST_PROP(RowsCanonical, RowByRowIsTheReferenceAndExpandsBack, ()) {
  const Rows rows = *GenRows();
  const RowRuns runs = RowByRow(rows);
  RC_ASSERT(runs == ReferenceCanonical(rows));
  RC_ASSERT(Expand(runs) == rows);
  RC_ASSERT(PlainRuns(runs) == ReferencePlain(rows));
  RC_ASSERT(TotalRows(runs) == static_cast<int64_t>(rows.size()));
  RC_ASSERT(PlainRunCount(runs) == static_cast<int64_t>(ReferencePlain(rows).size()));
  // Row by row, each run says what its rows are.
  int64_t at = 0;
  for (const RowRun& run : runs) {
    for (int64_t i = 0; i < RowsOf(run); ++i, ++at) {
      const RowAtResult row = RowAt(run, i);
      RC_ASSERT((Row{row.dp, row.token}) == rows[static_cast<size_t>(at)]);
    }
  }
}

// The rows cut into pieces, each one run that any caller could build: a
// stretch of one rank at one token step (stride 1, 0, negative...), or of
// padding; a single row carries an arbitrary stride, which means nothing.
RC_GTEST_PROP(RowsCanonical, AnyChunkingIntoRunsGivesTheSameList, ()) {
  const Rows rows = *GenRows();
  RowRuns runs;
  for (size_t i = 0; i < rows.size();) {
    const size_t most = *rc::gen::inRange<size_t>(1, rows.size() - i + 1);
    RowRun run{rows[i].dp, rows[i].token, 1, *rc::gen::inRange<int64_t>(-3, 4),
               *rc::gen::inRange<int64_t>(0, 3)};
    // A spaced chunk: this row, padding, a row of its rank, and on.
    size_t gap = 0;
    while (!run.is_pad() && i + 1 + gap < rows.size() && rows[i + 1 + gap].dp == RowRun::kPad) ++gap;
    const bool spaced = gap > 0 && i + 1 + gap < rows.size() && rows[i + 1 + gap].dp == run.dp &&
                        *rc::gen::arbitrary<bool>();
    if (spaced && most >= gap + 2) {
      run.gap = static_cast<int64_t>(gap);
      run.stride = rows[i + 1 + gap].token - run.first;
      run.count = 2;
      const auto next = [&](int64_t k) {  // where row k of the run would be
        return i + static_cast<size_t>(k) * (gap + 1);
      };
      while (next(run.count) < i + most && next(run.count) < rows.size() &&
             rows[next(run.count)] == Row{run.dp, TokenAt(run, run.count)} &&
             std::all_of(rows.begin() + static_cast<std::ptrdiff_t>(next(run.count - 1) + 1),
                         rows.begin() + static_cast<std::ptrdiff_t>(next(run.count)),
                         [](const Row& r) { return r.dp == RowRun::kPad; })) {
        ++run.count;
      }
    } else if (most >= 2 && rows[i + 1].dp == run.dp) {
      run.gap = 0;
      run.stride = run.is_pad() ? 1 : rows[i + 1].token - run.first;
      while (static_cast<size_t>(run.count) < most &&
             rows[i + static_cast<size_t>(run.count)] ==
                 Row{run.dp, run.is_pad() ? 0 : TokenAt(run, run.count)}) {
        ++run.count;
      }
    }
    AppendRun(runs, run);
    i += static_cast<size_t>(run.count == 1 ? 1 : RowsOf(run));
  }
  RC_ASSERT(runs == RowByRow(rows));
}

RC_GTEST_PROP(RowsCanonical, AppendRunsOfSubListsGivesTheSameList, ()) {
  const Rows rows = *GenRows();
  RowRuns runs;
  for (size_t i = 0; i < rows.size();) {
    const size_t n = *rc::gen::inRange<size_t>(1, rows.size() - i + 1);
    AppendRuns(runs, RowByRow(Rows(rows.begin() + static_cast<std::ptrdiff_t>(i),
                                   rows.begin() + static_cast<std::ptrdiff_t>(i + n))));
    i += n;
  }
  RC_ASSERT(runs == RowByRow(rows));
}

RC_GTEST_PROP(RowsCanonical, SliceIsTheCanonicalListOfTheRowsInBetween, ()) {
  const Rows rows = *GenRows();
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t start = *rc::gen::inRange<int64_t>(0, n + 1);
  const int64_t end = *rc::gen::inRange<int64_t>(start, n + 1);
  const RowTensor tensor(RowByRow(rows));
  RC_ASSERT(tensor.Slice(start, end) ==
            RowByRow(Rows(rows.begin() + start, rows.begin() + end)));
}

// Messages and JSON show the plain form: byte for byte what they were before
// strided runs, the cut included.
RC_GTEST_PROP(RowsCanonical, DescribeAndJsonShowThePlainForm, ()) {
  const Rows rows = *GenRows();
  const RowRuns runs = RowByRow(rows);
  const RowRuns plain = ReferencePlain(rows);
  const size_t max_runs = *rc::gen::inRange<size_t>(0, rows.size() + 2);
  RC_ASSERT(DescribeRuns(runs) == DescribeRuns(plain));
  RC_ASSERT(DescribeRuns(runs, max_runs) == DescribeRuns(plain, max_runs));
  RC_ASSERT(RunsToJson(runs).dump() == RunsToJson(plain).dump());
}

// The rules one at a time, as the property's counterexamples would show them.
TEST(RowsCanonicalTest, SingleRowsAtOneStepFoldIntoOneRun) {
  EXPECT_EQ(RowByRow({{0, 0}, {0, 5}, {0, 10}}), (RowRuns{{0, 0, 3, 5}}));
  EXPECT_EQ(RowByRow({{0, 4}, {0, 4}, {0, 4}}), (RowRuns{{0, 4, 3, 0}}));     // a repeat
  EXPECT_EQ(RowByRow({{0, 9}, {0, 6}, {0, 3}}), (RowRuns{{0, 9, 3, -3}}));    // reversed
  EXPECT_EQ(RowByRow({{0, 3}, {0, 2}}), (RowRuns{{0, 3, 2, -1}}));           // -1 is no run
}

TEST(RowsCanonicalTest, AGroupEndsAtAnotherStepOrRankOrPadding) {
  EXPECT_EQ(RowByRow({{0, 0}, {0, 2}, {0, 4}, {0, 7}, {0, 10}}),
            (RowRuns{{0, 0, 3, 2}, {0, 7, 2, 3}}));
  EXPECT_EQ(RowByRow({{0, 0}, {1, 2}, {0, 4}}), (RowRuns{{0, 0, 1}, {1, 2, 1}, {0, 4, 1}}));
  // A group that is not spaced ends at padding; its last row starts nothing.
  EXPECT_EQ(RowByRow({{0, 0}, {0, 2}, {-1, 0}, {0, 4}}),
            (RowRuns{{0, 0, 2, 2}, {RowRun::kPad, 0, 1}, {0, 4, 1}}));
  RowRuns pad;
  AppendRun(pad, {RowRun::kPad, 3, 2, 5, 1});
  EXPECT_EQ(pad, (RowRuns{{RowRun::kPad, 0, 2}}));
}

// A capture that writes every other row: two runs per row in the plain
// form, one spaced run here.
TEST(RowsCanonicalTest, SingleRowsApartByOnePaddingCountFoldIntoASpacedRun) {
  EXPECT_EQ(RowByRow({{0, 4}, {-1, 0}, {0, 5}, {-1, 0}, {0, 6}}), (RowRuns{{0, 4, 3, 1, 1}}));
  EXPECT_EQ(RowByRow({{1, 0}, {-1, 0}, {-1, 0}, {1, 3}, {-1, 0}, {-1, 0}, {1, 6}, {-1, 0}}),
            (RowRuns{{1, 0, 3, 3, 2}, {RowRun::kPad, 0, 1}}));
  EXPECT_EQ(RowByRow({{0, 2}, {-1, 0}, {0, 2}}), (RowRuns{{0, 2, 2, 0, 1}}));  // a repeat
  // Another padding count, another step or a contiguous run ends the group.
  EXPECT_EQ(RowByRow({{0, 0}, {-1, 0}, {0, 1}, {-1, 0}, {-1, 0}, {0, 2}}),
            (RowRuns{{0, 0, 2, 1, 1}, {RowRun::kPad, 0, 2}, {0, 2, 1}}));
  EXPECT_EQ(RowByRow({{0, 0}, {-1, 0}, {0, 1}, {-1, 0}, {0, 5}}),
            (RowRuns{{0, 0, 2, 1, 1}, {RowRun::kPad, 0, 1}, {0, 5, 1}}));
  EXPECT_EQ(RowByRow({{0, 0}, {0, 1}, {-1, 0}, {0, 2}}),
            (RowRuns{{0, 0, 2}, {RowRun::kPad, 0, 1}, {0, 2, 1}}));
  // A row next to the group's last row takes it back, with the padding
  // before it.
  EXPECT_EQ(RowByRow({{0, 0}, {-1, 0}, {0, 1}, {-1, 0}, {0, 2}, {0, 3}}),
            (RowRuns{{0, 0, 2, 1, 1}, {RowRun::kPad, 0, 1}, {0, 2, 2}}));
  EXPECT_EQ(RowByRow({{0, 0}, {-1, 0}, {0, 1}, {0, 2}}),
            (RowRuns{{0, 0, 1}, {RowRun::kPad, 0, 1}, {0, 1, 2}}));
  // Joined lists: the padding at the head of the second list lies between
  // the first list's last row and its own first row.
  RowRuns joined{{0, 0, 1}};
  AppendRuns(joined, RowRuns{{RowRun::kPad, 0, 1}, {0, 1, 1}, {1, 0, 4}});
  EXPECT_EQ(joined, (RowRuns{{0, 0, 2, 1, 1}, {1, 0, 4}}));
}

TEST(RowsCanonicalTest, ReportsAndSlicesShowASpacedRunsRowsAndPadding) {
  const RowRuns runs{{0, 0, 4, 1, 2}};  // r0 p p r1 p p r2 p p r3
  EXPECT_EQ(TotalRows(runs), 10);
  EXPECT_EQ(PlainRunCount(runs), 7);
  EXPECT_EQ(DescribeRuns(runs), "dp0[0..1) pad2 dp0[1..2) pad2 dp0[2..3) pad2 dp0[3..4)");
  EXPECT_EQ(DescribeRuns(runs, 2), "dp0[0..1) pad2 ... and 5 more runs (7 rows)");
  EXPECT_EQ(RunsToJson(RowRuns{{0, 7, 2, -7, 1}}).dump(),
            R"([{"dp":0,"from":7,"count":1},{"pad":1},{"dp":0,"from":0,"count":1}])");
  const RowTensor tensor(runs);
  EXPECT_EQ(tensor.Slice(0, 10), runs);
  EXPECT_EQ(tensor.Slice(1, 5), (RowRuns{{RowRun::kPad, 0, 2}, {0, 1, 1}, {RowRun::kPad, 0, 1}}));
  EXPECT_EQ(tensor.Slice(3, 7), (RowRuns{{0, 1, 2, 1, 2}}));
  EXPECT_EQ(tensor.Slice(2, 9), (RowRuns{{RowRun::kPad, 0, 1}, {0, 1, 2, 1, 2}, {RowRun::kPad, 0, 2}}));
  EXPECT_EQ(RowAt(runs[0], 6).token, 2);
  EXPECT_EQ(RowAt(runs[0], 5).dp, RowRun::kPad);
}

// A contiguous run after a group: the plain form merged the group's last
// row into it, so the group gives that row back.
TEST(RowsCanonicalTest, ARowNextToAGroupsLastRowTakesItOutOfTheGroup) {
  EXPECT_EQ(RowByRow({{0, 0}, {0, 5}, {0, 10}, {0, 11}}), (RowRuns{{0, 0, 2, 5}, {0, 10, 2}}));
  // A group of two gives back one row and is a plain single row again.
  EXPECT_EQ(RowByRow({{0, 0}, {0, 5}, {0, 6}}), (RowRuns{{0, 0, 1}, {0, 5, 2}}));
  // Next to the group's first row is no merge: only its last row is.
  EXPECT_EQ(RowByRow({{0, 4}, {0, 0}, {0, 5}}), (RowRuns{{0, 4, 2, -4}, {0, 5, 1}}));
}

// A multi-row run is its rows appended in turn; only its first row can meet
// the last run.
TEST(RowsCanonicalTest, AMultiRowRunIsAppendedAsItsRows) {
  RowRuns runs;
  AppendRun(runs, {0, 0, 2, 2});  // 0 2
  AppendRun(runs, {0, 4, 3});     // 4 takes a place in the group, 5 takes it back
  EXPECT_EQ(runs, (RowRuns{{0, 0, 2, 2}, {0, 4, 3}}));
  AppendRun(runs, {0, 9, 4, 2});  // 9 11 13 15 after ...5 6
  EXPECT_EQ(runs, (RowRuns{{0, 0, 2, 2}, {0, 4, 3}, {0, 9, 4, 2}}));
  AppendRun(runs, {0, 17, 2, 2});  // the same step: the group grows
  EXPECT_EQ(runs, (RowRuns{{0, 0, 2, 2}, {0, 4, 3}, {0, 9, 6, 2}}));
  AppendRun(runs, {0, 20, 1, 7});  // a single row's stride means nothing
  EXPECT_EQ(runs, (RowRuns{{0, 0, 2, 2}, {0, 4, 3}, {0, 9, 5, 2}, {0, 19, 2}}));
  AppendRun(runs, {0, 30, 1, 3});
  AppendRun(runs, {0, 30, 3, 0});  // a run of repeats after a single 30
  EXPECT_EQ(runs.back(), (RowRun{0, 30, 4, 0}));
  EXPECT_EQ(TotalRows(runs), 16);
}

TEST(RowsCanonicalTest, ReportsCountAStridedRunAsItsRows) {
  RowRuns runs;
  for (int64_t t = 0; t < 80; t += 2) AppendRun(runs, {0, t, 1});
  AppendRun(runs, {RowRun::kPad, 0, 3});
  ASSERT_EQ(runs, (RowRuns{{0, 0, 40, 2}, {RowRun::kPad, 0, 3}}));
  EXPECT_EQ(PlainRunCount(runs), 41);
  EXPECT_EQ(DescribeRuns(runs, 3), "dp0[0..1) dp0[2..3) dp0[4..5) ... and 38 more runs (40 rows)");
  EXPECT_EQ(DescribeRuns(RowRuns{{0, 7, 2, -7}}), "dp0[7..8) dp0[0..1)");
  EXPECT_EQ(RunsToJson(RowRuns{{0, 7, 2, -7}}).dump(),
            R"([{"dp":0,"from":7,"count":1},{"dp":0,"from":0,"count":1}])");
}

TEST(RowsCanonicalTest, ASliceOfAStridedRunIsStrided) {
  const RowTensor tensor(RowRuns{{1, 0, 10, 3}, {RowRun::kPad, 0, 2}});
  EXPECT_EQ(tensor.Slice(2, 5), (RowRuns{{1, 6, 3, 3}}));
  EXPECT_EQ(tensor.Slice(9, 11), (RowRuns{{1, 27, 1}, {RowRun::kPad, 0, 1}}));
  EXPECT_EQ(tensor.Slice(3, 4), (RowRuns{{1, 9, 1}}));
}

}  // namespace
}  // namespace r3
