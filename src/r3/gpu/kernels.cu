#include "r3/gpu/kernels.h"

#include <algorithm>
#include <type_traits>

#include "r3/gpu/fill.h"

namespace r3::gpu {
namespace {

constexpr int kThreads = 256;

unsigned Blocks(int64_t work) {
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 132 * 16));
}

__global__ void FillKernel(int32_t* full, int64_t rows, int64_t real_rows, int64_t top_k,
                           int64_t dp, const uint64_t* seed, int64_t id_space) {
  const uint64_t s = *seed;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * top_k;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = i / top_k;
    full[i] = row < real_rows ? FillValue(s, dp, row, i % top_k, id_space) : kPoison;
  }
}

__global__ void SetKernel(int32_t* data, int64_t count, int32_t value) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    data[i] = value;
  }
}

__global__ void CopySegmentsKernel(const CopySegment* segments, int64_t count) {
  for (int64_t s = blockIdx.y; s < count; s += gridDim.y) {
    const CopySegment seg = segments[s];
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < seg.units;
         i += int64_t{gridDim.x} * blockDim.x) {
      seg.dst[i] = seg.src[i];
    }
  }
}

__global__ void ReplayWriteKernel(const int32_t* topk, int64_t count, int16_t* replay) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count;
       i += int64_t{gridDim.x} * blockDim.x) {
    replay[i] = static_cast<int16_t>(topk[i]);
  }
}

template <typename Src>
__global__ void CaptureKernel(const Src* src, int64_t rows, int64_t top_k, int32_t* capturer,
                              int64_t row_stride, int64_t layer_offset) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * top_k;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = i / top_k;
    capturer[row * row_stride + layer_offset + i % top_k] = static_cast<int32_t>(src[i]);
  }
}

// The same copy, four values per thread (8- or 16-byte loads, 16-byte
// stores) with 32-bit index math: top_k % 4 == 0 keeps every group of four
// inside one row and every access aligned.
template <typename Src>
__global__ void CaptureKernelVec4(const Src* src, uint32_t groups, uint32_t groups_per_row,
                                  int32_t* capturer, int64_t row_stride, int64_t layer_offset) {
  using Load = std::conditional_t<sizeof(Src) == 2, short4, int4>;
  for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups;
       g += gridDim.x * blockDim.x) {
    const uint32_t row = g / groups_per_row;
    const uint32_t col = (g - row * groups_per_row) * 4;
    const Load v = reinterpret_cast<const Load*>(src)[g];
    reinterpret_cast<int4*>(capturer + row * row_stride + layer_offset + col)[0] =
        make_int4(v.x, v.y, v.z, v.w);
  }
}

template <typename Src>
void Capture(const Src* src, int64_t start, int64_t rows, int64_t top_k, int32_t* capturer,
             int64_t num_layers, int64_t layer, bool layer_stride_bug, cudaStream_t stream) {
  if (rows <= 0) return;
  const int64_t stride = layer_stride_bug ? top_k : num_layers * top_k;
  const int64_t count = rows * top_k;
  if (top_k % 4 == 0 && count / 4 < (int64_t{1} << 31)) {
    CaptureKernelVec4<<<Blocks(count / 4), kThreads, 0, stream>>>(
        src + start * top_k, static_cast<uint32_t>(count / 4),
        static_cast<uint32_t>(top_k / 4), capturer, stride, layer * top_k);
    return;
  }
  CaptureKernel<<<Blocks(rows * top_k), kThreads, 0, stream>>>(src + start * top_k, rows, top_k,
                                                                 capturer, stride, layer * top_k);
}

}  // namespace

void LaunchFill(int32_t* full, int64_t rows, int64_t real_rows, int64_t top_k, int64_t dp,
                const uint64_t* seed, int64_t id_space, cudaStream_t stream) {
  if (rows <= 0) return;
  FillKernel<<<Blocks(rows * top_k), kThreads, 0, stream>>>(full, rows, real_rows, top_k, dp,
                                                            seed, id_space);
}

void LaunchSet(int32_t* data, int64_t count, int32_t value, cudaStream_t stream) {
  if (count <= 0) return;
  SetKernel<<<Blocks(count), kThreads, 0, stream>>>(data, count, value);
}

void LaunchCopySegments(const CopySegment* segments, int64_t count, int64_t max_units,
                        cudaStream_t stream) {
  if (count <= 0 || max_units <= 0) return;
  const dim3 grid(std::min<unsigned>(Blocks(max_units), 64),
                  static_cast<unsigned>(std::min<int64_t>(count, 65535)));
  CopySegmentsKernel<<<grid, kThreads, 0, stream>>>(segments, count);
}

void LaunchReplayWrite(const int32_t* topk, int64_t rows, int64_t top_k, int16_t* replay,
                       cudaStream_t stream) {
  if (rows <= 0) return;
  ReplayWriteKernel<<<Blocks(rows * top_k), kThreads, 0, stream>>>(topk, rows * top_k, replay);
}

void LaunchCapture(const int16_t* src, int64_t start, int64_t rows, int64_t top_k,
                   int32_t* capturer, int64_t num_layers, int64_t layer, bool layer_stride_bug,
                   cudaStream_t stream) {
  Capture(src, start, rows, top_k, capturer, num_layers, layer, layer_stride_bug, stream);
}

void LaunchCapture(const int32_t* src, int64_t start, int64_t rows, int64_t top_k,
                   int32_t* capturer, int64_t num_layers, int64_t layer, bool layer_stride_bug,
                   cudaStream_t stream) {
  Capture(src, start, rows, top_k, capturer, num_layers, layer, layer_stride_bug, stream);
}

}  // namespace r3::gpu
