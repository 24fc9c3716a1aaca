// The canonical append of one row or of padding to a run list (rows.h's
// AppendRun, row by row), written once for any list type, so that the GPU
// path can fold a capture's rows into runs on the device with the very rules
// the host uses. A list offers size(), operator[], back(), pop_back(),
// push_back(RowRun) and a static Add(a, b) (overflow-checked on the host).
//
// An includer that compiles these for a device defines R3_RUN_APPEND_FN
// first (the GPU path: `__host__ __device__ inline`); plain C++ gets inline.
#ifndef R3_CASE_RUN_APPEND_H_
#define R3_CASE_RUN_APPEND_H_

#include <cstdint>

#include "r3/case/rows.h"

#ifndef R3_RUN_APPEND_FN
#define R3_RUN_APPEND_FN inline
#endif

namespace r3::internal {

// Token of the last row of a non-padding run.
R3_RUN_APPEND_FN int64_t LastToken(const RowRun& run) {
  return run.first + (run.count - 1) * run.stride;
}

// Appends the row (dp, token) of a non-padding rank to a canonical list.
template <typename Runs>
R3_RUN_APPEND_FN void AppendRowTo(Runs& runs, int64_t dp, int64_t token) {
  const int64_t n = static_cast<int64_t>(runs.size());
  // One padding run back: a single row of this rank and this one start a
  // spaced group, and a spaced group at this step and gap grows. Anything
  // else before the padding (a contiguous run, a group that is not spaced
  // so, another rank) keeps its rows: this one starts afresh.
  if (n >= 2 && runs[n - 1].dp == RowRun::kPad && runs[n - 2].dp == dp) {
    RowRun& prev = runs[n - 2];
    const int64_t gap = runs[n - 1].count;
    const int64_t step = token - LastToken(prev);
    if (prev.count == 1) {
      prev = RowRun{dp, prev.first, 2, step, gap};
      runs.pop_back();
      return;
    }
    if (prev.gap == gap && prev.stride == step) {
      prev.count = Runs::Add(prev.count, 1);
      runs.pop_back();
      return;
    }
    runs.push_back(RowRun{dp, token, 1});
    return;
  }
  if (n >= 1 && runs.back().dp == dp) {
    RowRun& last = runs.back();
    const int64_t step = token - LastToken(last);
    if (step == 1) {
      if (last.stride == 1 && last.gap == 0) {
        last.count = Runs::Add(last.count, 1);
        return;
      }
      // The plain form merges the group's last row with this one: the group
      // gives it back (a group of one is a plain single row again), and a
      // spaced group the padding before it.
      const int64_t gap = last.gap;
      if (--last.count == 1) last = RowRun{dp, last.first, 1};
      if (gap > 0) runs.push_back(RowRun{RowRun::kPad, 0, gap});
      runs.push_back(RowRun{dp, token - 1, 2});
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
  runs.push_back(RowRun{dp, token, 1});
}

template <typename Runs>
R3_RUN_APPEND_FN void AppendPadTo(Runs& runs, int64_t count) {
  if (runs.size() > 0 && runs.back().dp == RowRun::kPad) {
    runs.back().count = Runs::Add(runs.back().count, count);
  } else {
    runs.push_back(RowRun{RowRun::kPad, 0, count});
  }
}

}  // namespace r3::internal

#endif  // R3_CASE_RUN_APPEND_H_
