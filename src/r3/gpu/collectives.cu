#include "r3/gpu/collectives.h"

#include <algorithm>
#include <thread>

#include "r3/gpu/gpu.h"
#include "r3/gpu/internal/cuda_check.h"

namespace r3::gpu::internal {
namespace {

using Clock = std::chrono::steady_clock;

// NCCL caps the operations of one group.
constexpr int64_t kMaxGroupCalls = 1024;

// Between two polls: most waits end within microseconds (a collective
// being enqueued, a small batch), and a sleep costs ~60 us of timer slack,
// so the first millisecond yields; a long wait sleeps and leaves the CPU.
void Pause(Clock::time_point since) {
  if (Clock::now() - since < std::chrono::milliseconds(1)) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace

Collectives::~Collectives() { DestroyAll(); }

void Collectives::DestroyAll() {
  // Finalize is collective: on non-blocking communicators every call
  // returns at once, so one thread can finalize all ranks, then poll.
  std::vector<ncclComm_t> all;
  for (auto& [devices, comms] : comms_) all.insert(all.end(), comms.begin(), comms.end());
  comms_.clear();
  for (ncclComm_t c : all) ncclCommFinalize(c);
  const Clock::time_point start = Clock::now(), deadline = start + timeout_;
  bool settled = false;
  while (!settled && Clock::now() < deadline) {
    settled = true;
    for (ncclComm_t c : all) {
      ncclResult_t r = ncclSuccess;
      ncclCommGetAsyncError(c, &r);
      settled = settled && r != ncclInProgress;
    }
    if (!settled) Pause(start);
  }
  for (ncclComm_t c : all) settled ? ncclCommDestroy(c) : ncclCommAbort(c);
}

[[noreturn]] void Collectives::Abort(const std::string& what) {
  for (auto& [devices, comms] : comms_) {
    for (ncclComm_t c : comms) ncclCommAbort(c);
  }
  comms_.clear();
  throw GpuError(what + " (NCCL communicators aborted)");
}

void Collectives::Settle(const std::vector<ncclComm_t>& comms, const std::string& what) {
  const Clock::time_point start = Clock::now(), deadline = start + timeout_;
  for (;;) {
    bool pending = false;
    for (ncclComm_t c : comms) {
      ncclResult_t r = ncclSuccess;
      ncclCommGetAsyncError(c, &r);
      if (r == ncclInProgress) {
        pending = true;
      } else if (r != ncclSuccess) {
        Abort("NCCL: " + what + ": " + ncclGetErrorString(r));
      }
    }
    if (!pending) return;
    if (Clock::now() > deadline) {
      Abort("NCCL: " + what + " did not finish within " + std::to_string(timeout_.count()) +
            " ms; does every member of the group join the collective?");
    }
    Pause(start);
  }
}

const std::vector<ncclComm_t>& Collectives::Comms(const std::vector<int>& devices) {
  auto it = comms_.find(devices);
  if (it != comms_.end()) return it->second;
  ncclUniqueId id;
  R3_NCCL(ncclGetUniqueId(&id));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  std::vector<ncclComm_t> list(devices.size(), nullptr);
  R3_NCCL(ncclGroupStart());
  for (size_t i = 0; i < devices.size(); ++i) {
    R3_CUDA(cudaSetDevice(devices[i]));
    R3_NCCL(ncclCommInitRankConfig(&list[i], static_cast<int>(devices.size()), id,
                                   static_cast<int>(i), &config));
  }
  R3_NCCL(ncclGroupEnd());
  const std::vector<ncclComm_t>& comms = comms_.emplace(devices, std::move(list)).first->second;
  Settle(comms, "communicator setup");
  return comms;
}

Collectives::Members Collectives::MembersOf(const GatherIo& io) {
  Members m;
  for (size_t i = 0; i < io.device.size(); ++i) {
    const auto it = std::find(m.devices.begin(), m.devices.end(), io.device[i]);
    m.rank.push_back(static_cast<size_t>(it - m.devices.begin()));
    if (it == m.devices.end()) {
      m.devices.push_back(io.device[i]);
      m.leader.push_back(static_cast<int>(i));
    }
  }
  return m;
}

void Collectives::Connect(const GatherIo& io) {
  const Members m = MembersOf(io);
  if (m.devices.size() >= 2) Comms(m.devices);
}

void Collectives::Gather(const GatherPlan& g, const GatherIo& io,
                         std::span<const cudaStream_t> streams, int skipped_member) {
  const int64_t row_bytes = io.row_bytes;
  const Members m = MembersOf(io);
  const std::vector<int>& comm_devs = m.devices;
  const std::vector<int>& leader = m.leader;
  const std::vector<size_t>& comm_rank = m.rank;
  auto copy = [&](char* to, const char* from, int64_t bytes, int dev) {
    if (bytes <= 0) return;
    R3_CUDA(cudaSetDevice(dev));
    R3_CUDA(cudaMemcpyAsync(to, from, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                            streams[static_cast<size_t>(dev)]));
  };
  if (comm_devs.size() == 1) {
    for (size_t i = 0; i < g.members.size(); ++i) {
      for (size_t j = 0; j < g.members.size(); ++j) {
        copy(io.output[i] + g.offsets[j] * row_bytes, io.input[j], g.sizes[j] * row_bytes,
             io.device[i]);
      }
    }
    return;
  }
  const std::vector<ncclComm_t>& comm = Comms(comm_devs);
  // A skipped member's GPU issues nothing: its peers wait for it.
  const int skipped_rank =
      skipped_member >= 0 ? static_cast<int>(comm_rank[static_cast<size_t>(skipped_member)]) : -1;
  auto stream_of = [&](size_t e) { return streams[static_cast<size_t>(comm_devs[e])]; };
  R3_NCCL(ncclGroupStart());
  if (g.equal_sizes && comm_devs.size() == g.members.size()) {
    const size_t bytes = static_cast<size_t>(g.sizes[0] * row_bytes);
    for (size_t i = 0; i < g.members.size() && bytes > 0; ++i) {
      if (static_cast<int>(i) == skipped_rank) continue;
      R3_NCCL(ncclAllGather(io.input[i], io.output[i], bytes, ncclInt8, comm[i], stream_of(i)));
    }
  } else {
    int64_t calls = 0;
    for (size_t j = 0; j < g.members.size(); ++j) {
      const size_t bytes = static_cast<size_t>(g.sizes[j] * row_bytes);
      if (bytes == 0) continue;
      if (calls >= kMaxGroupCalls) {
        R3_NCCL(ncclGroupEnd());
        Settle(comm, "all-gather");
        R3_NCCL(ncclGroupStart());
        calls = 0;
      }
      calls += static_cast<int64_t>(comm_devs.size());
      for (size_t e = 0; e < comm_devs.size(); ++e) {
        if (static_cast<int>(e) == skipped_rank) continue;
        char* recv = io.output[static_cast<size_t>(leader[e])] + g.offsets[j] * row_bytes;
        R3_NCCL(ncclBroadcast(e == comm_rank[j] ? io.input[j] : recv, recv, bytes, ncclInt8,
                              static_cast<int>(comm_rank[j]), comm[e], stream_of(e)));
      }
    }
  }
  R3_NCCL(ncclGroupEnd());
  // Non-blocking: the collectives reach the streams only once settled.
  Settle(comm, "all-gather");
  // The other members on each GPU get the gathered tensor from its leader.
  for (size_t i = 0; i < g.members.size(); ++i) {
    const size_t leader_i = static_cast<size_t>(leader[comm_rank[i]]);
    if (leader_i != i) copy(io.output[i], io.output[leader_i], g.total * row_bytes, io.device[i]);
  }
}

void Collectives::Wait(std::span<const cudaStream_t> streams, std::span<const int> devices) {
  const Clock::time_point start = Clock::now(), deadline = start + timeout_;
  for (;;) {
    bool busy = false;
    for (size_t i = 0; i < streams.size(); ++i) {
      R3_CUDA(cudaSetDevice(devices[i]));
      const cudaError_t e = cudaStreamQuery(streams[i]);
      if (e == cudaErrorNotReady) {
        busy = true;
        continue;
      }
      R3_CUDA(e);
    }
    for (auto& [devs, comms] : comms_) {
      for (ncclComm_t c : comms) {
        ncclResult_t r = ncclSuccess;
        ncclCommGetAsyncError(c, &r);
        if (r != ncclSuccess && r != ncclInProgress) {
          Abort(std::string("NCCL asynchronous error: ") + ncclGetErrorString(r));
        }
      }
    }
    if (!busy) return;
    if (Clock::now() > deadline) {
      if (comms_.empty()) {
        throw GpuError("the GPU step did not finish within " + std::to_string(timeout_.count()) +
                       " ms");
      }
      Abort("the GPU step did not finish within " + std::to_string(timeout_.count()) +
            " ms: a collective whose members did not all join?");
    }
    Pause(start);
  }
}

}  // namespace r3::gpu::internal
