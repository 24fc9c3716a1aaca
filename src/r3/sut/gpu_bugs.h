// The GPU path's seeded data-movement bugs, as bits: a GPU-only row of the
// mutant catalogue (mutants.cc) names its bit, the GPU plan ORs the bits of
// the mutants on, and the kernels and the all-gathers test them. They are
// defined here, beside the rows, because the sut layer includes no GPU
// header; the GPU code, above it, reads them from here.
#ifndef R3_SUT_GPU_BUGS_H_
#define R3_SUT_GPU_BUGS_H_

#include <cstdint>

namespace r3::sut {

// Mistakes of the capture copy kernel (gpu::CaptureTask::bugs).
enum CaptureBug : int32_t {
  kNoCaptureBug = 0,
  kLayerStrideBug = 1,  // row stride top_k instead of num_layers * top_k
  kVecGroupsBug = 2,    // vectorised copy: one 4-wide group per row, not top_k / 4
  kTailRowsBug = 4,     // rows copied in tiles of 4; the last partial tile is lost
};

// Mistakes of the all-gathers, emulated and NCCL alike.
enum GatherBug : int32_t {
  kNoGatherBug = 0,
  kReversedMembersBug = 1,  // the members' rows land last to first
  kLastMemberSkipsBug = 2,  // a group's last member skips the collective
};

}  // namespace r3::sut

#endif  // R3_SUT_GPU_BUGS_H_
