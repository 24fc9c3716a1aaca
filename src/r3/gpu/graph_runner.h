// CUDA-graph mode: one case's step captured once as a graph per GPU that
// holds its ranks (GPU 0 for emulated ranks; every GPU, the NCCL
// all-gathers included, for ranks spread over GPUs) and replayed, each
// replay with its own fill seed and the same buffer addresses, as vLLM
// replays a captured decode step. Included by .cu files only.
#ifndef R3_GPU_GRAPH_RUNNER_H_
#define R3_GPU_GRAPH_RUNNER_H_

#include <functional>
#include <vector>

#include "r3/gpu/arena.h"
#include "r3/gpu/batch_launch.h"
#include "r3/gpu/gpu.h"

namespace r3::gpu::internal {

// `one` holds a single case. `observe` reads the step just run. Returns the
// first replay's observation with a wrong value (else the first's), with
// steps, values and wrong values summed over all replays.
sut::Observation RunGraphReplays(BatchLaunch& step, std::vector<Work>& one,
                                 std::vector<DeviceArena>& devices, int replays,
                                 const std::function<sut::Observation(const Work&)>& observe);

}  // namespace r3::gpu::internal

#endif  // R3_GPU_GRAPH_RUNNER_H_
