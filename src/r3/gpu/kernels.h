// The CUDA kernels of the capture path. Included by .cu files only.
#ifndef R3_GPU_KERNELS_H_
#define R3_GPU_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace r3::gpu {

// One contiguous copy of a device-to-device gather, in 2-byte units.
struct CopySegment {
  const uint16_t* src = nullptr;
  uint16_t* dst = nullptr;
  int64_t units = 0;
};

// full[(rows, K)]: row r < real_rows gets FillValue(*seed, dp, r, k); the rest
// (SP padding) gets kPoison.
void LaunchFill(int32_t* full, int64_t rows, int64_t real_rows, int64_t top_k, int64_t dp,
                const uint64_t* seed, int64_t id_space, cudaStream_t stream);

// data[0, count) = value.
void LaunchSet(int32_t* data, int64_t count, int32_t value, cudaStream_t stream);

// Every segment of `segments` (device memory), in one launch: the emulated
// all-gathers.
void LaunchCopySegments(const CopySegment* segments, int64_t count, int64_t max_units,
                        cudaStream_t stream);

// The monolithic MoE kernel's replay output, stood in: one int16 row per
// input row of topk_ids.
void LaunchReplayWrite(const int32_t* topk, int64_t rows, int64_t top_k, int16_t* replay,
                       cudaStream_t stream);

// capture(): capturer[i, layer, :] = src[start + i, :] for i in [0, rows),
// widened to int32. layer_stride_bug uses top_k as the row stride (mutant).
void LaunchCapture(const int16_t* src, int64_t start, int64_t rows, int64_t top_k,
                   int32_t* capturer, int64_t num_layers, int64_t layer, bool layer_stride_bug,
                   cudaStream_t stream);
void LaunchCapture(const int32_t* src, int64_t start, int64_t rows, int64_t top_k,
                   int32_t* capturer, int64_t num_layers, int64_t layer, bool layer_stride_bug,
                   cudaStream_t stream);

}  // namespace r3::gpu

#endif  // R3_GPU_KERNELS_H_
