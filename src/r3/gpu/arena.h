// Per-GPU memory of the runner: a stream, one data allocation carved up per
// batch, one allocation for the batch's task tables, one for the slow
// cases' read back, and pinned host memory
// for the tables' upload and the judge's counters. Allocations only grow;
// all of it is freed by RAII. Included by .cu files only.
#ifndef R3_GPU_ARENA_H_
#define R3_GPU_ARENA_H_

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "r3/gpu/internal/cuda_handles.h"

namespace r3::gpu::internal {

class DeviceArena {
 public:
  explicit DeviceArena(int device) : device_(device), stream_(CreateStream(device)) {}

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_.get(); }

  // Base of at least `bytes` of device memory for the batch's buffers /
  // task tables; earlier contents are lost when it grows.
  char* Data(int64_t bytes) { return Grow(data_, data_capacity_, bytes, int64_t{64} << 20); }
  char* Tables(int64_t bytes) { return Grow(tables_, tables_capacity_, bytes, int64_t{1} << 20); }
  // The slow cases' read back: its pack table and staging rows.
  char* Readback(int64_t bytes) {
    return Grow(readback_, readback_capacity_, bytes, int64_t{1} << 20);
  }

 private:
  char* Grow(DeviceMemory& memory, int64_t& capacity, int64_t bytes, int64_t minimum) {
    if (bytes > capacity || memory.get() == nullptr) {
      R3_CUDA(cudaSetDevice(device_));
      R3_CUDA(cudaStreamSynchronize(stream()));
      memory.reset();
      capacity = std::max(bytes + bytes / 4, minimum);
      memory = AllocateDevice(device_, capacity);
    }
    return memory.get();
  }

  int device_;
  Stream stream_;
  DeviceMemory data_;
  int64_t data_capacity_ = 0;
  DeviceMemory tables_;
  int64_t tables_capacity_ = 0;
  DeviceMemory readback_;
  int64_t readback_capacity_ = 0;
};

class PinnedArena {
 public:
  char* Get(int64_t bytes) {
    if (bytes > capacity_ || memory_.get() == nullptr) {
      memory_.reset();
      capacity_ = std::max(bytes + bytes / 4, int64_t{1} << 20);
      memory_ = AllocatePinned(capacity_);
    }
    return memory_.get();
  }

 private:
  PinnedMemory memory_;
  int64_t capacity_ = 0;
};

}  // namespace r3::gpu::internal

#endif  // R3_GPU_ARENA_H_
