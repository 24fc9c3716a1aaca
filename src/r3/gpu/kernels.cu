#include "r3/gpu/kernels.h"

#include <algorithm>
#include <type_traits>

#include "r3/gpu/fill.h"

namespace r3::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 132 * 16;  // 16 blocks per H200 SM

unsigned Blocks(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

// blockIdx.y walks the tasks, blockIdx.x the task's elements: many small
// tasks share the machine, one big task still gets many blocks.
dim3 TaskGrid(int64_t count, int64_t max_work) {
  const int64_t tasks = std::min<int64_t>(count, 65535);
  const int64_t per_task = std::max<int64_t>(4, kMaxBlocks * 2 / tasks);
  return dim3(std::min<unsigned>(Blocks(max_work), static_cast<unsigned>(per_task)),
              static_cast<unsigned>(tasks));
}

#define R3_TASK_LOOP(task, count) for (int64_t task = blockIdx.y; task < (count); task += gridDim.y)
#define R3_ELEMENT_LOOP(i, work)                                                   \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (work); \
       i += int64_t{gridDim.x} * blockDim.x)

__global__ void FillKernel(const FillTask* tasks, int64_t count, const uint64_t* seeds) {
  R3_TASK_LOOP(t, count) {
    const FillTask task = tasks[t];
    const uint64_t seed = seeds[task.seed_index];
    R3_ELEMENT_LOOP(i, task.rows * task.top_k) {
      const int64_t row = i / task.top_k;
      task.full[i] = row < task.real_rows
                         ? FillValue(seed, task.dp, row, i % task.top_k, task.id_space)
                         : kPoison;
    }
  }
}

__global__ void SetKernel(const SetTask* tasks, int64_t count) {
  R3_TASK_LOOP(t, count) {
    const SetTask task = tasks[t];
    R3_ELEMENT_LOOP(i, task.count) task.data[i] = kUnwritten;
  }
}

__global__ void CopySegmentsKernel(const CopySegment* segments, int64_t count) {
  R3_TASK_LOOP(s, count) {
    const CopySegment seg = segments[s];
    R3_ELEMENT_LOOP(i, seg.units) seg.dst[i] = seg.src[i];
  }
}

__global__ void ReplayWriteKernel(const ReplayTask* tasks, int64_t count) {
  R3_TASK_LOOP(t, count) {
    const ReplayTask task = tasks[t];
    R3_ELEMENT_LOOP(i, task.count) task.replay[i] = static_cast<int16_t>(task.topk[i]);
  }
}

// The capture copy's geometry, shared by its two forms.
struct CaptureShape {
  int64_t row_stride = 0;
  int64_t rows = 0;
  int64_t count = 0;
};

__host__ __device__ inline CaptureShape ShapeOf(const CaptureTask& task) {
  CaptureShape s;
  s.row_stride = (task.bugs & sut::kLayerStrideBug) ? task.top_k : task.num_layers * task.top_k;
  s.rows = (task.bugs & sut::kTailRowsBug) ? task.rows / 4 * 4 : task.rows;
  s.count = s.rows * task.top_k;
  return s;
}

// With top_k % 4 == 0 every group of four values stays inside one row and
// every access is aligned: 8- or 16-byte loads, 16-byte stores, 32-bit
// index math.
__host__ __device__ inline bool Vectorised(const CaptureTask& task) {
  return task.top_k % 4 == 0 && ShapeOf(task).count / 4 < (int64_t{1} << 31);
}

// The copy by the threads first, first + stride, ... of a launch.
template <typename Src>
__device__ void CaptureVec4(const CaptureTask& task, uint32_t first, uint32_t stride) {
  using Load = std::conditional_t<sizeof(Src) == 2, short4, int4>;
  const CaptureShape shape = ShapeOf(task);
  const Load* src = static_cast<const Load*>(task.src);
  int32_t* out = task.capturer + task.layer * task.top_k;
  const uint32_t groups_per_row = static_cast<uint32_t>(task.top_k / 4);
  const uint32_t groups =
      static_cast<uint32_t>((task.bugs & sut::kVecGroupsBug) ? shape.rows : shape.count / 4);
  for (uint32_t g = first; g < groups; g += stride) {
    const uint32_t row = g / groups_per_row;
    const uint32_t col = (g - row * groups_per_row) * 4;
    const Load v = src[g];
    reinterpret_cast<int4*>(out + row * shape.row_stride + col)[0] =
        make_int4(v.x, v.y, v.z, v.w);
  }
}

template <typename Src>
__device__ void CaptureScalar(const CaptureTask& task, int64_t first, int64_t stride) {
  const CaptureShape shape = ShapeOf(task);
  const Src* src = static_cast<const Src*>(task.src);
  int32_t* out = task.capturer + task.layer * task.top_k;
  for (int64_t i = first; i < shape.count; i += stride) {
    const int64_t row = i / task.top_k;
    out[row * shape.row_stride + i % task.top_k] = static_cast<int32_t>(src[i]);
  }
}

template <typename Src>
__device__ void CaptureCopy(const CaptureTask& task, int64_t first, int64_t stride) {
  if (Vectorised(task)) {
    CaptureVec4<Src>(task, static_cast<uint32_t>(first), static_cast<uint32_t>(stride));
  } else {
    CaptureScalar<Src>(task, first, stride);
  }
}

__device__ void CaptureOne(const CaptureTask& task, int64_t first, int64_t stride) {
  if (task.src_bytes == 2) {
    CaptureCopy<int16_t>(task, first, stride);
  } else {
    CaptureCopy<int32_t>(task, first, stride);
  }
}

__global__ void CaptureKernel(const CaptureTask* tasks, int64_t count) {
  R3_TASK_LOOP(t, count) {
    CaptureOne(tasks[t], blockIdx.x * int64_t{blockDim.x} + threadIdx.x,
               int64_t{gridDim.x} * blockDim.x);
  }
}

// One source type and one form per kernel: the bandwidth figure measures
// the copy, not branches around it.
template <typename Src>
__global__ void CaptureVec4Kernel(CaptureTask task) {
  CaptureVec4<Src>(task, blockIdx.x * blockDim.x + threadIdx.x, gridDim.x * blockDim.x);
}

template <typename Src>
__global__ void CaptureScalarKernel(CaptureTask task) {
  CaptureScalar<Src>(task, blockIdx.x * int64_t{blockDim.x} + threadIdx.x,
                     int64_t{gridDim.x} * blockDim.x);
}

template <typename Src>
void LaunchCaptureOf(const CaptureTask& task, cudaStream_t stream) {
  if (Vectorised(task)) {
    CaptureVec4Kernel<Src><<<Blocks(ShapeOf(task).count / 4), kThreads, 0, stream>>>(task);
  } else {
    CaptureScalarKernel<Src><<<Blocks(ShapeOf(task).count), kThreads, 0, stream>>>(task);
  }
}

// Mismatches are rare on the pass path: one atomic pair per thread that saw
// any. A thread walks its elements in increasing order, so its first wrong
// one is its smallest.
__global__ void JudgeKernel(const JudgeTask* tasks, int64_t count, const uint64_t* seeds,
                            unsigned long long* counters) {
  R3_TASK_LOOP(t, count) {
    const JudgeTask task = tasks[t];
    const uint64_t seed = seeds[task.seed_index];
    const int64_t row_values = task.num_layers * task.top_k;
    unsigned long long wrong = 0;
    unsigned long long written = 0;  // the element loop's rows only grow
    int64_t first = -1;
    R3_ELEMENT_LOOP(i, task.rows * row_values) {
      const int64_t row = i / row_values;
      const int64_t in_row = i - row * row_values;
      const int64_t layer = in_row / task.top_k;
      const int32_t expected =
          (layer == task.layer && row < task.model_rows)
              ? FillValue(seed, task.dp, row, in_row - layer * task.top_k, task.id_space)
              : kUnwritten;
      const int32_t got = task.capturer[i];
      if (layer == task.layer && got != kUnwritten) written = static_cast<unsigned long long>(row + 1);
      if (got != expected) {
        if (wrong++ == 0) first = i;
      }
    }
    if (wrong > 0) {
      atomicAdd(&counters[task.counter_index + kWrongSlot], wrong);
      atomicMax(&counters[task.counter_index + kFirstSlot],
                ~static_cast<unsigned long long>(first));
    }
    if (written > 0) atomicMax(&counters[task.counter_index + kWrittenSlot], written);
  }
}

// After the judge: the value at each summary's first wrong index.
__global__ void FirstGotKernel(const JudgeTask* tasks, int64_t count,
                               unsigned long long* counters) {
  for (int64_t t = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; t < count;
       t += int64_t{gridDim.x} * blockDim.x) {
    unsigned long long* summary = counters + tasks[t].counter_index;
    if (summary[kWrongSlot] == 0) continue;
    const int64_t first = static_cast<int64_t>(~summary[kFirstSlot]);
    summary[kGotSlot] = static_cast<uint32_t>(tasks[t].capturer[first]);
  }
}

__global__ void PackKernel(const PackTask* tasks, int64_t count) {
  R3_TASK_LOOP(t, count) {
    const PackTask task = tasks[t];
    R3_ELEMENT_LOOP(i, task.rows * task.top_k) {
      const int64_t row = i / task.top_k;
      task.dst[i] = task.src[row * task.row_stride + (i - row * task.top_k)];
    }
  }
}

__device__ inline unsigned long long IndexKey(uint64_t hash) { return hash == 0 ? 1 : hash; }

__global__ void IndexBuildKernel(const IndexBuildTask* tasks, int64_t count) {
  R3_TASK_LOOP(t, count) {
    const IndexBuildTask task = tasks[t];
    R3_ELEMENT_LOOP(token, task.rows) {
      uint64_t h = 0x243F6A8885A308D3ull;  // RowHash of the row's fill, value by value
      for (int64_t k = 0; k < task.top_k; ++k) {
        h = Mix64(h ^ static_cast<uint32_t>(FillValue(task.seed, task.dp, token, k, task.id_space)));
      }
      const unsigned long long key = IndexKey(h);
      for (uint64_t slot = key & task.mask;; slot = (slot + 1) & task.mask) {
        const unsigned long long was = atomicCAS(&task.table[slot].key, 0ull, key);
        if (was == 0 || was == key) {
          atomicMax(&task.table[slot].last, IndexedRow(task.dp, token));
          break;
        }
      }
    }
  }
}

__global__ void IndexLookupKernel(const IndexLookupTask* tasks, int64_t count) {
  R3_TASK_LOOP(t, count) {
    const IndexLookupTask task = tasks[t];
    R3_ELEMENT_LOOP(row, task.rows) {
      const int32_t* got = task.values + row * task.top_k;
      bool model = row < task.model_rows;
      for (int64_t k = 0; model && k < task.top_k; ++k) {
        model = FillValue(task.seed, task.model_dp, row, k, task.id_space) == got[k];
      }
      int64_t found = model ? kModelRow : kAskTheHost;
      if (!model && task.table != nullptr) {
        const unsigned long long key = IndexKey(RowHash(got, task.top_k));
        found = kNoStepRow;
        for (uint64_t slot = key & task.mask;; slot = (slot + 1) & task.mask) {
          const IndexSlot s = task.table[slot];
          if (s.key == 0) break;
          if (s.key != key) continue;
          const int64_t packed = static_cast<int64_t>(s.last - 1);
          found = packed;
          for (int64_t k = 0; k < task.top_k; ++k) {
            if (FillValue(task.seed, PackedDp(packed), PackedToken(packed), k, task.id_space) !=
                got[k]) {
              found = kAskTheHost;
            }
          }
          break;
        }
      }
      task.found[row] = found;
    }
  }
}

}  // namespace

void LaunchFills(const FillTask* tasks, int64_t count, int64_t max_work, const uint64_t* seeds,
                 cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  FillKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count, seeds);
}

void LaunchSets(const SetTask* tasks, int64_t count, int64_t max_work, cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  SetKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count);
}

void LaunchCopySegments(const CopySegment* segments, int64_t count, int64_t max_units,
                        cudaStream_t stream) {
  if (count <= 0 || max_units <= 0) return;
  CopySegmentsKernel<<<TaskGrid(count, max_units), kThreads, 0, stream>>>(segments, count);
}

void LaunchReplayWrites(const ReplayTask* tasks, int64_t count, int64_t max_work,
                        cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  ReplayWriteKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count);
}

void LaunchCaptures(const CaptureTask* tasks, int64_t count, int64_t max_work,
                    cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  CaptureKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count);
}

void LaunchJudges(const JudgeTask* tasks, int64_t count, int64_t max_work, const uint64_t* seeds,
                  unsigned long long* counters, cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  JudgeKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count, seeds, counters);
  FirstGotKernel<<<Blocks(count), kThreads, 0, stream>>>(tasks, count, counters);
}

void LaunchPacks(const PackTask* tasks, int64_t count, int64_t max_work, cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  PackKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count);
}

void LaunchIndexBuilds(const IndexBuildTask* tasks, int64_t count, int64_t max_work,
                       cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  IndexBuildKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count);
}

void LaunchIndexLookups(const IndexLookupTask* tasks, int64_t count, int64_t max_work,
                        cudaStream_t stream) {
  if (count <= 0 || max_work <= 0) return;
  IndexLookupKernel<<<TaskGrid(count, max_work), kThreads, 0, stream>>>(tasks, count);
}

void LaunchCapture(const CaptureTask& task, cudaStream_t stream) {
  if (task.rows <= 0) return;
  if (task.src_bytes == 2) {
    LaunchCaptureOf<int16_t>(task, stream);
  } else {
    LaunchCaptureOf<int32_t>(task, stream);
  }
}

}  // namespace r3::gpu
