// CUDA-graph mode: one emulated case's step captured once as a graph on
// GPU 0 and replayed, each replay with its own fill seed and the same
// buffer addresses, as vLLM replays a captured decode step. Included by .cu
// files only.
#ifndef R3_GPU_GRAPH_RUNNER_H_
#define R3_GPU_GRAPH_RUNNER_H_

#include <functional>
#include <vector>

#include "r3/gpu/arena.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/batch_launch.h"

namespace r3::gpu::internal {

// `one` holds a single emulated case. `judge` judges the step just run.
// Returns the first failing replay's result (else the first), with steps,
// values and wrong values summed over all replays.
GpuCaseResult RunGraphReplays(BatchLaunch& step, std::vector<Work>& one, DeviceArena& gpu0,
                              int replays, const std::function<GpuCaseResult(const Work&)>& judge);

}  // namespace r3::gpu::internal

#endif  // R3_GPU_GRAPH_RUNNER_H_
