#include "r3/case/rows.h"

#include <algorithm>
#include <charconv>

#include "r3/case/checked_math.h"

namespace r3 {

namespace {

// Appends the row (dp, token) of a non-padding rank to a canonical list.
void AppendRow(RowRuns& runs, int64_t dp, int64_t token) {
  const size_t n = runs.size();
  // One padding run back: a single row of this rank and this one start a
  // spaced group, and a spaced group at this step and gap grows. Anything
  // else before the padding (a contiguous run, a group that is not spaced
  // so, another rank) keeps its rows: this one starts afresh.
  if (n >= 2 && runs[n - 1].is_pad() && runs[n - 2].dp == dp) {
    RowRun& prev = runs[n - 2];
    const int64_t gap = runs[n - 1].count;
    const int64_t step = token - TokenAt(prev, prev.count - 1);
    if (prev.count == 1) {
      prev = {dp, prev.first, 2, step, gap};
      runs.pop_back();
      return;
    }
    if (prev.gap == gap && prev.stride == step) {
      prev.count = CheckedAdd(prev.count, 1);
      runs.pop_back();
      return;
    }
    runs.push_back({dp, token, 1});
    return;
  }
  if (n >= 1 && runs.back().dp == dp) {
    RowRun& last = runs.back();
    const int64_t step = token - TokenAt(last, last.count - 1);
    if (step == 1) {
      if (!last.strided()) {
        last.count = CheckedAdd(last.count, 1);
        return;
      }
      // The plain form merges the group's last row with this one: the group
      // gives it back (a group of one is a plain single row again), and a
      // spaced group the padding before it.
      const int64_t gap = last.gap;
      if (--last.count == 1) last = {dp, last.first, 1};
      if (gap > 0) runs.push_back({RowRun::kPad, 0, gap});
      runs.push_back({dp, token - 1, 2});
      return;
    }
    // A single row and this one start a group; a group at this step grows.
    // A contiguous run, a spaced group, or a group at another step, ends here.
    if (last.count == 1) {
      last.stride = step;
      last.count = 2;
      return;
    }
    if (last.gap == 0 && last.stride == step) {
      ++last.count;
      return;
    }
  }
  runs.push_back({dp, token, 1});
}

void AppendPad(RowRuns& runs, int64_t count) {
  if (!runs.empty() && runs.back().is_pad()) {
    runs.back().count = CheckedAdd(runs.back().count, count);
  } else {
    runs.push_back({RowRun::kPad, 0, count});
  }
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
