// The CUDA kernels of the capture path. Included by .cu files only.
//
// Every phase of a step is one launch over a table of tasks (blockIdx.y
// picks the task), so a batch of thousands of small cases costs a handful
// of launches, not a handful per rank.
#ifndef R3_GPU_KERNELS_H_
#define R3_GPU_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "r3/gpu/fill.h"
#include "r3/sut/gpu_bugs.h"

namespace r3::gpu {

// One contiguous copy of a device-to-device gather, in 2-byte units.
struct CopySegment {
  const uint16_t* src = nullptr;
  uint16_t* dst = nullptr;
  int64_t units = 0;
};

// full[(rows, top_k)]: row r < real_rows gets FillValue(seeds[seed_index], dp,
// r, k); the rest (SP padding) gets kPoison.
struct FillTask {
  int32_t* full = nullptr;
  int64_t rows = 0;
  int64_t real_rows = 0;
  int64_t top_k = 0;
  int64_t dp = 0;
  int64_t id_space = 1;
  int64_t seed_index = 0;
};

// data[0, count) = kUnwritten.
struct SetTask {
  int32_t* data = nullptr;
  int64_t count = 0;
};

// The monolithic MoE kernel's replay output, stood in: replay = int16(topk).
struct ReplayTask {
  const int32_t* topk = nullptr;
  int16_t* replay = nullptr;
  int64_t count = 0;
};

// capture(): capturer[i, layer, :] = src[i, :] for i in [0, rows), widened to
// int32 (src already points at the slice's first row).
struct CaptureTask {
  const void* src = nullptr;
  int32_t* capturer = nullptr;
  int64_t rows = 0;
  int64_t top_k = 0;
  int64_t num_layers = 0;
  int64_t layer = 0;
  int32_t src_bytes = 4;  // 2: the int16 replay buffer, 4: topk_ids
  int32_t bugs = sut::kNoCaptureBug;  // the GPU mutants' sut::CaptureBug bits
};

// The judge: counts the values of capturer[(rows, num_layers, top_k)] that
// differ from the model's expectation, FillValue(seed, dp, row, k) at the
// capture layer for row < model_rows and kUnwritten everywhere else. Its
// summary is kJudgeSlots counters from counter_index: the count, the first
// wrong value's flat index as ~index (0: none; counters start zeroed and an
// atomicMax of ~index keeps the smallest), the value found there, and the
// capture layer's written rows (1 + the last row holding anything but
// kUnwritten: the read-back stops there).
inline constexpr int64_t kJudgeSlots = 4;
enum JudgeSlot : int64_t { kWrongSlot = 0, kFirstSlot = 1, kGotSlot = 2, kWrittenSlot = 3 };

struct JudgeTask {
  const int32_t* capturer = nullptr;
  int64_t rows = 0;
  int64_t num_layers = 0;
  int64_t top_k = 0;
  int64_t layer = 0;
  int64_t model_rows = 0;
  int64_t dp = 0;
  int64_t id_space = 1;
  int64_t seed_index = 0;
  int64_t counter_index = 0;
};

// The read back's gather: `rows` rows of top_k values, `row_stride` values
// apart from `src`, packed into dst (a staging buffer copied back whole).
struct PackTask {
  const int32_t* src = nullptr;
  int32_t* dst = nullptr;
  int64_t rows = 0;
  int64_t row_stride = 0;
  int64_t top_k = 0;
};

// The device's row index of one slow case: which row of the step a
// captured row is. An open-addressing table of `mask + 1` slots keyed by
// RowHash (0 is read as 1: 0 marks an empty slot), each keeping the last
// (dp, token) in (dp, token) order with that hash, as IndexedRow(dp, token)
// (fill.h, with what a lookup writes).
struct IndexSlot {
  unsigned long long key = 0;
  unsigned long long last = 0;
};

// Indexes the rows [0, rows) of DP rank dp.
struct IndexBuildTask {
  IndexSlot* table = nullptr;
  uint64_t mask = 0;
  uint64_t seed = 0;
  int64_t dp = 0;
  int64_t rows = 0;
  int64_t top_k = 0;
  int64_t id_space = 1;
};

// Looks up `rows` packed rows of top_k values; `found` gets one entry per
// row (fill.h). A row below model_rows equal to DP rank model_dp's row of
// its index is kModelRow; table == nullptr: every other row is kAskTheHost.
struct IndexLookupTask {
  int64_t model_dp = 0;
  int64_t model_rows = 0;
  const IndexSlot* table = nullptr;
  uint64_t mask = 0;
  uint64_t seed = 0;
  const int32_t* values = nullptr;
  int64_t* found = nullptr;
  int64_t rows = 0;
  int64_t top_k = 0;
  int64_t id_space = 1;
};

// Each Launch* runs `count` tasks of a device-resident table; max_work is
// the largest task's element count (it sizes the grid).
void LaunchFills(const FillTask* tasks, int64_t count, int64_t max_work, const uint64_t* seeds,
                 cudaStream_t stream);
void LaunchSets(const SetTask* tasks, int64_t count, int64_t max_work, cudaStream_t stream);
void LaunchCopySegments(const CopySegment* segments, int64_t count, int64_t max_units,
                        cudaStream_t stream);
void LaunchReplayWrites(const ReplayTask* tasks, int64_t count, int64_t max_work,
                        cudaStream_t stream);
void LaunchCaptures(const CaptureTask* tasks, int64_t count, int64_t max_work,
                    cudaStream_t stream);
// The judge and then its summaries' values at the first wrong index.
void LaunchJudges(const JudgeTask* tasks, int64_t count, int64_t max_work, const uint64_t* seeds,
                  unsigned long long* counters, cudaStream_t stream);

void LaunchPacks(const PackTask* tasks, int64_t count, int64_t max_work, cudaStream_t stream);
void LaunchIndexBuilds(const IndexBuildTask* tasks, int64_t count, int64_t max_work,
                       cudaStream_t stream);
void LaunchIndexLookups(const IndexLookupTask* tasks, int64_t count, int64_t max_work,
                        cudaStream_t stream);

// One capture copy on its own (the benchmark's bandwidth figure): the same
// device code as LaunchCaptures, for a task held in host memory.
void LaunchCapture(const CaptureTask& task, cudaStream_t stream);

}  // namespace r3::gpu

#endif  // R3_GPU_KERNELS_H_
