// Sub-allocation from one allocation: a first pass with no base only
// measures, a second hands out addresses. Plain C++ (no CUDA).
#ifndef R3_GPU_INTERNAL_BUMP_H_
#define R3_GPU_INTERNAL_BUMP_H_

#include <algorithm>
#include <cstdint>

#include "r3/case/checked_math.h"

namespace r3::gpu::internal {

// Every buffer starts on a 256-byte boundary and spans whole 16-byte units:
// NCCL and compute-sanitizer both read in 16-byte units.
inline constexpr int64_t kAlign = 256;

class Bump {
 public:
  explicit Bump(char* base = nullptr) : base_(base) {}
  template <typename T>
  T* Take(int64_t count) {
    const int64_t bytes = CheckedMul(count, static_cast<int64_t>(sizeof(T)));
    T* p = base_ != nullptr ? reinterpret_cast<T*>(base_ + used_) : nullptr;
    used_ = CheckedAdd(used_, CheckedMul(CeilDiv(std::max<int64_t>(bytes, 1), kAlign), kAlign));
    return p;
  }
  int64_t used() const { return used_; }

 private:
  char* base_;
  int64_t used_ = 0;
};

}  // namespace r3::gpu::internal

#endif  // R3_GPU_INTERNAL_BUMP_H_
