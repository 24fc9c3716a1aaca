#include "r3/case/rows.h"

#include <algorithm>
#include <charconv>

#include "r3/case/checked_math.h"
#include "r3/case/run_append.h"

namespace r3 {

namespace {

// A run list as internal::AppendRowTo takes it, counts overflow-checked.
struct VectorRuns {
  RowRuns& runs;
  size_t size() const { return runs.size(); }
  RowRun& operator[](int64_t i) { return runs[static_cast<size_t>(i)]; }
  RowRun& back() { return runs.back(); }
  void pop_back() { runs.pop_back(); }
  void push_back(const RowRun& run) { runs.push_back(run); }
  static int64_t Add(int64_t a, int64_t b) { return CheckedAdd(a, b); }
};

void AppendRow(RowRuns& runs, int64_t dp, int64_t token) {
  VectorRuns list{runs};
  internal::AppendRowTo(list, dp, token);
}

void AppendPad(RowRuns& runs, int64_t count) {
  VectorRuns list{runs};
  internal::AppendPadTo(list, count);
}

}  // namespace

int64_t RowsOf(const RowRun& run) {
  if (run.gap <= 0 || run.count <= 1 || run.is_pad()) return run.count;
  return CheckedAdd(run.count, CheckedMul(run.count - 1, run.gap));
}

void AppendRun(RowRuns& runs, const RowRun& run) {
  if (run.count <= 0) return;
  if (run.is_pad()) {
    AppendPad(runs, run.count);
    return;
  }
  // Row by row; from the third row on, each row only extends the last run
  // (a contiguous run after two rows, a group at run.stride, spaced by
  // run.gap, after three), so the rest is one count.
  const int64_t head = std::min<int64_t>(run.count, 3);
  const bool spaced = run.gap > 0 && run.count > 1;
  for (int64_t i = 0; i < head; ++i) {
    if (spaced && i > 0) AppendPad(runs, run.gap);
    AppendRow(runs, run.dp, TokenAt(run, i));
  }
  if (run.count > head) runs.back().count = CheckedAdd(runs.back().count, run.count - head);
}

void AppendRunRows(RowRuns& runs, const RowRun& run, int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min(hi, RowsOf(run));
  if (lo >= hi) return;
  if (run.is_pad()) {
    AppendPad(runs, hi - lo);
    return;
  }
  if (run.gap <= 0 || run.count <= 1) {
    AppendRun(runs, {run.dp, TokenAt(run, lo), hi - lo, run.stride});
    return;
  }
  // Row `at` of a spaced run is its (at / period)-th row when at % period is
  // 0, padding otherwise.
  const int64_t period = run.gap + 1;
  int64_t at = lo;
  if (at % period != 0) {
    const int64_t pad = std::min(period - at % period, hi - at);
    AppendPad(runs, pad);
    at += pad;
  }
  if (at >= hi) return;
  const int64_t first = at / period;
  const int64_t last = (hi - 1) / period;
  AppendRun(runs, {run.dp, TokenAt(run, first), last - first + 1, run.stride, run.gap});
  at = last * period + 1;
  if (at < hi) AppendPad(runs, hi - at);
}

void AppendRuns(RowRuns& runs, const RowRuns& more) {
  // AppendRow looks only at the last run, or across a last padding run at
  // the one before it. `more`'s own build, once it has taken the rows of
  // more[0..j], ends in more[j] as it is in the end (a row that changes a
  // run later belongs to it or, given back, comes after it). So once a
  // non-padding more[j] lands unchanged as our last run, the same rows give
  // the same runs: the rest of `more` follows as it is. (After a padding
  // run, the next row looks past it at our run, not more's.) Joining long
  // lists (a decode's chunks, the judge's joined captures) is then a copy.
  for (size_t j = 0; j < more.size(); ++j) {
    AppendRun(runs, more[j]);
    // An empty run adds nothing (and leaves `runs` empty when it is first).
    if (!runs.empty() && !more[j].is_pad() && runs.back() == more[j]) {
      runs.insert(runs.end(), more.begin() + static_cast<std::ptrdiff_t>(j + 1), more.end());
      return;
    }
  }
}

int64_t TotalRows(const RowRuns& runs) {
  int64_t total = 0;
  for (const RowRun& run : runs) total = CheckedAdd(total, RowsOf(run));
  return total;
}

int64_t PlainRunCount(const RowRuns& runs) {
  int64_t total = 0;
  for (const RowRun& run : runs) {
    const int64_t plain = !run.strided() ? 1 : run.gap > 0 ? 2 * run.count - 1 : run.count;
    total = CheckedAdd(total, plain);
  }
  return total;
}

RowRuns PlainRuns(const RowRuns& runs) {
  RowRuns out;
  ForEachPlainRun(runs, [&out](const RowRun& run) {
    out.push_back(run);
    return true;
  });
  return out;
}

std::string DescribeRuns(const RowRuns& runs) { return DescribeRuns(runs, SIZE_MAX); }

std::string DescribeRuns(const RowRuns& runs, size_t max_runs) {
  std::string out;
  AppendDescribedRuns(out, runs, max_runs);
  return out;
}

void AppendDescribedRuns(std::string& out, const RowRuns& runs, size_t max_runs) {
  if (runs.empty()) {
    out += "(no rows)";
    return;
  }
  // Appends, not a stream: a misplaced capture has a run per row, and the
  // judge describes every failing rank's runs.
  const int64_t plain = PlainRunCount(runs);
  const int64_t shown =
      max_runs < static_cast<uint64_t>(plain) ? static_cast<int64_t>(max_runs) : plain;
  out.reserve(out.size() + static_cast<size_t>(shown) * 16 + 48);
  const auto number = [&out](int64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    out.append(digits, end);
  };
  int64_t described = 0;
  int64_t described_rows = 0;
  ForEachPlainRun(runs, [&](const RowRun& run) {
    if (described == shown) return false;
    if (described++ > 0) out += ' ';
    described_rows += run.count;
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
    return true;
  });
  if (shown < plain) {
    out += " ... and ";
    number(plain - shown);
    out += " more runs (";
    number(TotalRows(runs) - described_rows);
    out += " rows)";
  }
}

RowTensor::RowTensor(RowRuns runs) : runs_(std::move(runs)) {
  offsets_.reserve(runs_.size());
  int64_t total = 0;
  for (const RowRun& run : runs_) {
    total = CheckedAdd(total, RowsOf(run));
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
    const int64_t run_begin = run_end - RowsOf(runs_[i]);
    if (run_begin >= end) break;
    AppendRunRows(out, runs_[i], start - run_begin, end - run_begin);
  }
  return out;
}

}  // namespace r3
