// Folding a capturing rank's rows into runs on the device. When the host
// SUT claims the model's rows for a rank (ClaimIsModelPrefix), what each
// captured row is follows from the device's row lookups alone (fill.h: the
// model's row, a row of the step, or none), so a chunk of rows folds into
// its runs where the lookups are, with the host's own append rules
// (r3/case/run_append.h), and only those few runs come back
// instead of the rows' values and lookups.
#ifndef R3_GPU_FOLD_H_
#define R3_GPU_FOLD_H_

#include <cstdint>

#include "r3/case/rows.h"
#include "r3/gpu/fill.h"

#ifdef R3_CASE_RUN_APPEND_H_
#error "r3/gpu/fold.h must come before anything that includes run_append.h"
#endif
#define R3_RUN_APPEND_FN R3_HOST_DEVICE inline
#include "r3/case/run_append.h"

namespace r3::gpu {

// Runs a chunk may fold into; a chunk that needs more (a capture scattered
// beyond what strided runs fold) is decoded on the host.
inline constexpr int64_t kFoldRuns = 16;
// A fold's count when the host decodes the chunk: a row the device's
// lookup left to the host's index, or more than kFoldRuns runs.
inline constexpr int64_t kHostDecodes = -1;

// A run list of fixed capacity, as r3::internal::AppendRowTo takes it.
struct FixedRuns {
  RowRun* data = nullptr;
  int64_t capacity = 0;
  int64_t n = 0;
  bool overflow = false;

  R3_HOST_DEVICE int64_t size() const { return n; }
  R3_HOST_DEVICE RowRun& operator[](int64_t i) { return data[i]; }
  R3_HOST_DEVICE RowRun& back() { return data[n - 1]; }
  R3_HOST_DEVICE void pop_back() { --n; }
  R3_HOST_DEVICE void push_back(const RowRun& run) {
    if (n == capacity) {
      overflow = true;
      return;
    }
    data[n++] = run;
  }
  // Counts stay below a capture's rows: no overflow to check.
  R3_HOST_DEVICE static int64_t Add(int64_t a, int64_t b) { return a + b; }
};

// Rows [first, last) of a capturing rank of DP rank `model_dp` whose claim
// is the model's rows, from the device's lookups (`found`, indexed by row):
// the runs DecodeRankRows gives them, in out[0, count); kHostDecodes when
// the host must decode them. `out` holds `capacity` runs.
R3_HOST_DEVICE inline int64_t FoldFoundRows(const int64_t* found, int64_t first, int64_t last,
                                            int64_t model_dp, RowRun* out, int64_t capacity) {
  FixedRuns runs{out, capacity};
  for (int64_t row = first; row < last; ++row) {
    const int64_t f = found[row];
    if (f == kAskTheHost) return kHostDecodes;
    if (f == kNoStepRow) {
      r3::internal::AppendPadTo(runs, 1);
    } else if (f == kModelRow) {
      r3::internal::AppendRowTo(runs, model_dp, row);
    } else {
      r3::internal::AppendRowTo(runs, PackedDp(f), PackedToken(f));
    }
    if (runs.overflow) return kHostDecodes;
  }
  return runs.n;
}

}  // namespace r3::gpu

#endif  // R3_GPU_FOLD_H_
