// CUDA and NCCL calls that throw GpuError naming the call, file and line.
// Included by .cu files only.
#ifndef R3_GPU_INTERNAL_CUDA_CHECK_H_
#define R3_GPU_INTERNAL_CUDA_CHECK_H_

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>
#include <string_view>

#include "r3/gpu/gpu.h"

namespace r3::gpu::internal {

// "src/r3/gpu/runner.cu:42", whatever directory the build ran from.
inline std::string Where(std::string_view file, int line) {
  const size_t src = file.rfind("src/r3/");
  if (src != std::string_view::npos) file.remove_prefix(src);
  return std::string(file) + ":" + std::to_string(line);
}

inline void CheckCuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  throw GpuError("CUDA error at " + Where(file, line) + ": " + call + ": " +
                 cudaGetErrorString(e));
}

// ncclInProgress is success for a non-blocking communicator: the caller
// waits for it (Collectives::Settle).
inline void CheckNccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  throw GpuError("NCCL error at " + Where(file, line) + ": " + call + ": " +
                 ncclGetErrorString(r));
}

}  // namespace r3::gpu::internal

#define R3_CUDA(call) ::r3::gpu::internal::CheckCuda((call), #call, __FILE__, __LINE__)
#define R3_NCCL(call) ::r3::gpu::internal::CheckNccl((call), #call, __FILE__, __LINE__)

#endif  // R3_GPU_INTERNAL_CUDA_CHECK_H_
