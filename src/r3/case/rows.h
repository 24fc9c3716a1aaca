// Symbolic rows. A tensor of routing rows is described by runs: "count rows
// of DP rank `dp`, starting at its token `first`", or "count SP padding
// rows". A gathered batch of 2^20 rows over 64K ranks stays a few thousand
// runs, so the CPU never materialises real rows.
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

  bool is_pad() const { return dp == kPad; }
  friend bool operator==(const RowRun&, const RowRun&) = default;
};

using RowRuns = std::vector<RowRun>;

// Appends a run, merging it into the last one when they are contiguous, so
// equal row sequences always have equal run lists. Empty runs are dropped.
void AppendRun(RowRuns& runs, const RowRun& run);
void AppendRuns(RowRuns& runs, const RowRuns& more);

int64_t TotalRows(const RowRuns& runs);

// "dp0[0..5) pad1 dp1[0..3)" — for reports.
std::string DescribeRuns(const RowRuns& runs);
// The same, cut after max_runs runs with "... and N more runs (M rows)": a
// scattered capture has a run per row, and a verdict's message should stay
// readable (the JSON's run arrays keep them all).
std::string DescribeRuns(const RowRuns& runs, size_t max_runs);

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
