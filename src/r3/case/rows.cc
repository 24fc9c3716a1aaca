#include "r3/case/rows.h"

#include <algorithm>
#include <charconv>

#include "r3/case/checked_math.h"

namespace r3 {

void AppendRun(RowRuns& runs, const RowRun& run) {
  if (run.count <= 0) return;
  if (!runs.empty()) {
    RowRun& last = runs.back();
    const bool contiguous =
        last.dp == run.dp && (run.is_pad() || CheckedAdd(last.first, last.count) == run.first);
    if (contiguous) {
      last.count = CheckedAdd(last.count, run.count);
      return;
    }
  }
  runs.push_back(run.is_pad() ? RowRun{RowRun::kPad, 0, run.count} : run);
}

void AppendRuns(RowRuns& runs, const RowRuns& more) {
  for (const RowRun& run : more) AppendRun(runs, run);
}

int64_t TotalRows(const RowRuns& runs) {
  int64_t total = 0;
  for (const RowRun& run : runs) total = CheckedAdd(total, run.count);
  return total;
}

std::string DescribeRuns(const RowRuns& runs) { return DescribeRuns(runs, runs.size()); }

std::string DescribeRuns(const RowRuns& runs, size_t max_runs) {
  if (runs.empty()) return "(no rows)";
  // Appends, not a stream: a misplaced capture has a run per row, and the
  // judge describes every failing rank's runs.
  std::string out;
  const size_t shown = std::min(max_runs, runs.size());
  out.reserve(shown * 16);
  const auto number = [&out](int64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    out.append(digits, end);
  };
  for (size_t i = 0; i < shown; ++i) {
    const RowRun& run = runs[i];
    if (i > 0) out += ' ';
    if (run.is_pad()) {
      out += "pad";
      number(run.count);
    } else {
      out += "dp";
      number(run.dp);
      out += '[';
      number(run.first);
      out += "..";
      number(run.first + run.count);
      out += ')';
    }
  }
  if (shown < runs.size()) {
    int64_t rows = 0;
    for (size_t i = shown; i < runs.size(); ++i) rows += runs[i].count;
    out += " ... and ";
    number(static_cast<int64_t>(runs.size() - shown));
    out += " more runs (";
    number(rows);
    out += " rows)";
  }
  return out;
}

RowTensor::RowTensor(RowRuns runs) : runs_(std::move(runs)) {
  offsets_.reserve(runs_.size());
  int64_t total = 0;
  for (const RowRun& run : runs_) {
    total = CheckedAdd(total, run.count);
    offsets_.push_back(total);
  }
}

RowRuns RowTensor::Slice(int64_t start, int64_t end) const {
  RowRuns out;
  start = std::max<int64_t>(start, 0);
  end = std::min(end, rows());
  if (start >= end) return out;
  // First run whose end is past `start`.
  auto it = std::upper_bound(offsets_.begin(), offsets_.end(), start);
  for (size_t i = static_cast<size_t>(it - offsets_.begin()); i < runs_.size(); ++i) {
    const int64_t run_end = offsets_[i];
    const int64_t run_begin = run_end - runs_[i].count;
    if (run_begin >= end) break;
    const int64_t lo = std::max(start, run_begin);
    const int64_t hi = std::min(end, run_end);
    RowRun piece = runs_[i];
    if (!piece.is_pad()) piece.first += lo - run_begin;
    piece.count = hi - lo;
    AppendRun(out, piece);
  }
  return out;
}

}  // namespace r3
