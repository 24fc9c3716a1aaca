// Symbolic rows. A tensor of routing rows is described by runs: "count rows
// of DP rank `dp`, starting at its token `first`", or "count SP padding
// rows". A gathered batch of 2^20 rows over 64K ranks stays a few thousand
// runs, so the CPU never materialises real rows.
//
// A run may also be strided: count >= 2 single rows first, first + stride,
// ... of one DP rank, so that a scattered capture (a kernel writing every
// L-th row) stays a handful of runs instead of one per row. A strided run
// may also be spaced: `gap` padding rows between each two of its rows (a
// capture that writes every other row, padding in between), so that a
// misplaced capture is a few runs too, not two per row. Stride and gap are
// representation only: reports and JSON show the plain form, in which a
// strided run is its count single-row runs, with a padding run of `gap`
// rows between each two.
#ifndef R3_CASE_ROWS_H_
#define R3_CASE_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace r3 {

struct RowRun {
  static constexpr int64_t kPad = -1;

  int64_t dp = kPad;  // owning DP rank, or kPad for SP padding rows
  int64_t first = 0;  // first token index within the owner's N[dp] rows
  int64_t count = 0;
  // Token step from one row to the next: 1 for a contiguous run and always
  // for padding; anything else (0 and negative included) only in a strided
  // run of count >= 2 rows, each a run of its own in the plain form.
  int64_t stride = 1;
  // Padding rows between each two rows of a strided run (never after its
  // last row); 0 everywhere else.
  int64_t gap = 0;

  bool is_pad() const { return dp == kPad; }
  bool strided() const { return stride != 1 || gap != 0; }
  friend bool operator==(const RowRun&, const RowRun&) = default;
};

using RowRuns = std::vector<RowRun>;

// Token of the i-th row of the owner (0 <= i < count) of a non-padding run.
inline int64_t TokenAt(const RowRun& run, int64_t i) { return run.first + i * run.stride; }

// Rows the run spans: its count, and a spaced run's padding between.
int64_t RowsOf(const RowRun& run);

// Row `at` (0 <= at < RowsOf(run)) of a run: its owner and token, or
// {kPad, 0} for a padding row. Inline: decoders call it once per row.
struct RowAtResult {
  int64_t dp;
  int64_t token;
};
inline RowAtResult RowAt(const RowRun& run, int64_t at) {
  if (run.is_pad()) return {RowRun::kPad, 0};
  if (run.gap <= 0) return {run.dp, TokenAt(run, at)};
  const int64_t period = run.gap + 1;
  if (at % period != 0) return {RowRun::kPad, 0};
  return {run.dp, TokenAt(run, at / period)};
}

// Appends rows [lo, hi) of `run` (clamped to [0, RowsOf(run))) to `runs` as
// AppendRun would append them one by one.
void AppendRunRows(RowRuns& runs, const RowRun& run, int64_t lo, int64_t hi);

// Appends a run as if row by row, keeping the canonical form, so equal row
// sequences always have equal run lists: contiguous rows merged into one run
// (the plain form), then every maximal left-to-right group of >= 2 single-row
// runs of one DP rank at a constant token step, each two either adjacent or
// apart by one padding run of a constant count, one strided run (spaced by
// that count, or not). Empty runs are dropped. O(1).
void AppendRun(RowRuns& runs, const RowRun& run);
// `more` canonical (built by AppendRun, as every RowRuns is): O(1) per run
// until its runs settle, then a copy of the rest.
void AppendRuns(RowRuns& runs, const RowRuns& more);

int64_t TotalRows(const RowRuns& runs);

// Runs of the plain form: a strided run counts as its rows and the padding
// runs between them.
int64_t PlainRunCount(const RowRuns& runs);

// Calls f(const RowRun&) for each run of the plain form, in order, until f
// returns false.
template <typename F>
void ForEachPlainRun(const RowRuns& runs, F&& f) {
  for (const RowRun& run : runs) {
    if (!run.strided()) {
      if (!f(run)) return;
      continue;
    }
    for (int64_t i = 0; i < run.count; ++i) {
      if (i > 0 && run.gap > 0 && !f(RowRun{RowRun::kPad, 0, run.gap})) return;
      if (!f(RowRun{run.dp, TokenAt(run, i), 1})) return;
    }
  }
}

// The plain form itself (strided runs expanded), for tests and small lists.
RowRuns PlainRuns(const RowRuns& runs);

// "dp0[0..5) pad1 dp1[0..3)" — for reports, in the plain form.
std::string DescribeRuns(const RowRuns& runs);
// The same, cut after max_runs runs with "... and N more runs (M rows)": a
// scattered capture has a run per row, and a verdict's message should stay
// readable (the JSON's run arrays keep them all).
std::string DescribeRuns(const RowRuns& runs, size_t max_runs);
// DescribeRuns(runs, max_runs) appended to `out`.
void AppendDescribedRuns(std::string& out, const RowRuns& runs, size_t max_runs);

// A run list with prefix offsets, for O(log n) slicing of large gathered
// tensors.
class RowTensor {
 public:
  RowTensor() = default;
  explicit RowTensor(RowRuns runs);

  const RowRuns& runs() const { return runs_; }
  int64_t rows() const { return offsets_.empty() ? 0 : offsets_.back(); }

  // Rows [start, end), clamped to the tensor.
  RowRuns Slice(int64_t start, int64_t end) const;

 private:
  RowRuns runs_;
  std::vector<int64_t> offsets_;  // offsets_[i] = rows before runs_[i+1]
};

}  // namespace r3

#endif  // R3_CASE_ROWS_H_
