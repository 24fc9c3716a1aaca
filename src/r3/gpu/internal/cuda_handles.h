// Owners of CUDA handles: each frees its handle exactly once, on the device
// it belongs to, also when an exception unwinds past it. Destructors ignore
// errors (a failed free during unwinding must not hide the first error).
// Included by .cu files only.
#ifndef R3_GPU_INTERNAL_CUDA_HANDLES_H_
#define R3_GPU_INTERNAL_CUDA_HANDLES_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>

#include "r3/gpu/internal/cuda_check.h"

namespace r3::gpu::internal {

template <typename Handle, typename Traits>
class Owned {
 public:
  Owned() = default;
  Owned(int device, Handle h) : device_(device), handle_(h) {}
  ~Owned() { reset(); }
  Owned(Owned&& o) noexcept : device_(o.device_), handle_(std::exchange(o.handle_, Handle{})) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      device_ = o.device_;
      handle_ = std::exchange(o.handle_, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  Handle get() const { return handle_; }
  int device() const { return device_; }
  void reset() {
    if (handle_ == Handle{}) return;
    if (device_ >= 0) cudaSetDevice(device_);
    Traits::Free(handle_);
    handle_ = Handle{};
  }

 private:
  int device_ = -1;
  Handle handle_{};
};

struct DeviceMemoryTraits {
  static void Free(char* p) { cudaFree(p); }
};
struct PinnedMemoryTraits {
  static void Free(char* p) { cudaFreeHost(p); }
};
struct StreamTraits {
  static void Free(cudaStream_t s) { cudaStreamDestroy(s); }
};
struct GraphTraits {
  static void Free(cudaGraph_t g) { cudaGraphDestroy(g); }
};
struct GraphExecTraits {
  static void Free(cudaGraphExec_t g) { cudaGraphExecDestroy(g); }
};

using DeviceMemory = Owned<char*, DeviceMemoryTraits>;
using PinnedMemory = Owned<char*, PinnedMemoryTraits>;
using Stream = Owned<cudaStream_t, StreamTraits>;
using Graph = Owned<cudaGraph_t, GraphTraits>;
using GraphExec = Owned<cudaGraphExec_t, GraphExecTraits>;

inline DeviceMemory AllocateDevice(int device, int64_t bytes) {
  R3_CUDA(cudaSetDevice(device));
  char* p = nullptr;
  R3_CUDA(cudaMalloc(&p, static_cast<size_t>(bytes)));
  return DeviceMemory(device, p);
}

inline PinnedMemory AllocatePinned(int64_t bytes) {
  char* p = nullptr;
  R3_CUDA(cudaMallocHost(&p, static_cast<size_t>(bytes)));
  return PinnedMemory(-1, p);
}

inline Stream CreateStream(int device) {
  R3_CUDA(cudaSetDevice(device));
  cudaStream_t s = nullptr;
  R3_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return Stream(device, s);
}

}  // namespace r3::gpu::internal

#endif  // R3_GPU_INTERNAL_CUDA_HANDLES_H_
