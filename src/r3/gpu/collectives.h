// The collective executor: vLLM's all-gathers over NCCL between GPUs, and
// the waits that never hang. Communicators are non-blocking, so every wait
// polls (cudaStreamQuery, ncclCommGetAsyncError) against a deadline; a
// collective whose members do not all join (a rank that took another
// branch) ends in ncclCommAbort and a GpuError, not a hang.
// Included by .cu files only.
#ifndef R3_GPU_COLLECTIVES_H_
#define R3_GPU_COLLECTIVES_H_

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "r3/gpu/plan.h"

namespace r3::gpu::internal {

// Where each member of a gather group reads and writes, and on which GPU.
struct GatherIo {
  std::vector<const char*> input;
  std::vector<char*> output;
  std::vector<int> device;
  int64_t row_bytes = 0;
};

class Collectives {
 public:
  explicit Collectives(std::chrono::milliseconds timeout) : timeout_(timeout) {}
  ~Collectives();
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  // One all-gather of `g`: ncclAllGather for equal sizes, else one
  // ncclBroadcast per root in one group (vLLM's all_gatherv). NCCL allows
  // one rank per GPU, so the communicator spans the group's distinct GPUs:
  // each GPU's first member receives, then copies to the others there.
  // `streams[d]` is GPU d's stream. `skipped_member` >= 0 leaves that member
  // out of the collective (the gpu-skipped-collective mutant).
  void Gather(const GatherPlan& g, const GatherIo& io, std::span<const cudaStream_t> streams,
              int skipped_member = -1);

  // Creates the communicator `io`'s group will use, so that its all-gathers
  // can be captured into a CUDA graph (communicator setup cannot be).
  void Connect(const GatherIo& io);

  // Waits until every stream is idle and every communicator settled; past
  // the deadline it aborts every communicator and throws GpuError.
  void Wait(std::span<const cudaStream_t> streams, std::span<const int> devices);

 private:
  const std::vector<ncclComm_t>& Comms(const std::vector<int>& devices);
  // The group's GPUs in group-rank order of their first member; per member
  // its GPU's rank there, and per GPU its first member.
  struct Members {
    std::vector<int> devices, leader;
    std::vector<size_t> rank;
  };
  static Members MembersOf(const GatherIo& io);
  // Polls the communicators until none is in progress.
  void Settle(const std::vector<ncclComm_t>& comms, const std::string& what);
  [[noreturn]] void Abort(const std::string& what);
  void DestroyAll();

  std::chrono::milliseconds timeout_;
  std::map<std::vector<int>, std::vector<ncclComm_t>> comms_;
};

}  // namespace r3::gpu::internal

#endif  // R3_GPU_COLLECTIVES_H_
