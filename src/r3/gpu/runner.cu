#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/case/checked_math.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/fill.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/kernels.h"
#include "r3/gpu/plan.h"

namespace r3::gpu {
namespace {

void CheckCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw GpuError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
  }
}
void CheckNccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    throw GpuError(std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
  }
}
#define R3_CUDA(call) CheckCuda((call), #call)
#define R3_NCCL(call) CheckNccl((call), #call)

// Every buffer starts on a 256-byte boundary and spans whole 16-byte units:
// NCCL and compute-sanitizer both read in 16-byte units.
constexpr int64_t kAlign = 256;

// Sub-allocation from one allocation per batch. A first pass with no base
// only measures.
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

struct RankBuffers {
  int device = 0;
  int32_t* full = nullptr;
  int32_t* local = nullptr;
  int32_t* routed = nullptr;
  int16_t* replay = nullptr;
  char* tp_gathered = nullptr;
  int32_t* capturer = nullptr;
  int32_t* readback = nullptr;  // pinned host
  int64_t readback_rows = 0;
};

// One case of a batch, from plan to buffers.
struct Work {
  const Case* c = nullptr;
  sut::Observation host;
  Plan plan;
  uint64_t seed = 0;
  bool nccl = false;
  std::vector<RankBuffers> ranks;
  std::vector<uint64_t*> seed_device;  // per device used
  uint64_t* seed_host = nullptr;
  // Emulated collectives: [0] dispatch all-gathers, [1] TP all-gathers.
  CopySegment* segments_device[2] = {nullptr, nullptr};
  CopySegment* segments_host[2] = {nullptr, nullptr};
  int64_t segment_count[2] = {0, 0};
  int64_t segment_units[2] = {0, 0};
};

int64_t SegmentCount(const std::vector<GatherPlan>& gathers) {
  int64_t count = 0;
  for (const GatherPlan& g : gathers) {
    count = CheckedAdd(count, CheckedMul(static_cast<int64_t>(g.members.size()),
                                         static_cast<int64_t>(g.members.size())));
  }
  return count;
}

int64_t TpElementBytes(const RankPlan& r) { return r.replay_ok ? 2 : 4; }

}  // namespace

struct Runner::Impl {
  struct Device {
    int id = 0;
    cudaStream_t stream = nullptr;
    char* arena = nullptr;
    int64_t capacity = 0;
  };

  GpuOptions options;
  std::vector<Device> devices;
  char* host_arena = nullptr;
  int64_t host_capacity = 0;
  std::map<std::vector<int>, std::vector<ncclComm_t>> comms;

  explicit Impl(GpuOptions opts) : options(std::move(opts)) {
    // NVLink multicast stays off on shared hosts.
    setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/1);
    const Availability gpus = ProbeGpus();
    if (!gpus.ok()) throw GpuError("no GPU: " + gpus.detail);
    const int count = options.max_gpus > 0 ? std::min(options.max_gpus, gpus.devices)
                                           : gpus.devices;
    devices.resize(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      devices[static_cast<size_t>(i)].id = i;
      R3_CUDA(cudaSetDevice(i));
      R3_CUDA(cudaStreamCreateWithFlags(&devices[static_cast<size_t>(i)].stream,
                                        cudaStreamNonBlocking));
    }
  }

  ~Impl() {
    for (auto& [key, list] : comms) {
      for (ncclComm_t comm : list) ncclCommDestroy(comm);
    }
    for (Device& d : devices) {
      cudaSetDevice(d.id);
      if (d.arena != nullptr) cudaFree(d.arena);
      if (d.stream != nullptr) cudaStreamDestroy(d.stream);
    }
    if (host_arena != nullptr) cudaFreeHost(host_arena);
  }

  // Ranks go to GPUs with NCCL whenever there are two GPUs and two ranks:
  // one rank per GPU when they fit, else round-robin (rank d*T + t on GPU
  // (d*T + t) % G, so with T = G the TP group spans the GPUs).
  bool UseNccl(const Case& c) const {
    const int64_t ranks = c.config.dp * c.config.tp;
    return options.mode == RankMode::kAuto && !options.graph && devices.size() >= 2 &&
           ranks >= 2;
  }

  std::string ModeName(const Work& w) const {
    const int64_t gpus = std::min<int64_t>(static_cast<int64_t>(w.ranks.size()),
                                           static_cast<int64_t>(devices.size()));
    std::string mode = w.nccl ? "nccl on " + std::to_string(gpus) + " GPUs" +
                                    (gpus < static_cast<int64_t>(w.ranks.size())
                                         ? ", " + std::to_string(w.ranks.size()) + " ranks"
                                         : std::string())
                              : std::string("emulated on 1 GPU");
    return options.graph ? mode + ", graph" : mode;
  }

  const std::vector<ncclComm_t>& Comms(const std::vector<int>& devs) {
    auto it = comms.find(devs);
    if (it != comms.end()) return it->second;
    std::vector<ncclComm_t> list(devs.size());
    R3_NCCL(ncclCommInitAll(list.data(), static_cast<int>(devs.size()), devs.data()));
    return comms.emplace(devs, std::move(list)).first->second;
  }

  Work Prepare(const Case& c) const {
    Work w;
    w.c = &c;
    w.host = sut::RunSut(c, options.sut);
    w.seed = CaseSeed(c);
    w.plan = BuildPlan(c, w.host, options.sut.mutants, w.seed);
    w.nccl = UseNccl(c);
    w.ranks.resize(w.plan.ranks.size());
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      w.ranks[i].device = w.nccl ? static_cast<int>(i % devices.size()) : 0;
      w.ranks[i].readback_rows = ReadbackRows(w.plan, c, i);
    }
    w.segment_count[0] = w.nccl ? 0 : SegmentCount(w.plan.gathers);
    w.segment_count[1] = w.nccl ? 0 : SegmentCount(w.plan.tp_gathers);
    return w;
  }

  // Carves the case's buffers out of the bumps (pointers stay null when the
  // bumps only measure).
  static void Allocate(Work& w, std::vector<Bump>& dev, Bump& host) {
    const Plan& p = w.plan;
    const int64_t k = p.top_k;
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      const RankPlan& r = p.ranks[i];
      RankBuffers& b = w.ranks[i];
      Bump& bump = dev[static_cast<size_t>(b.device)];
      b.full = bump.Take<int32_t>(CheckedMul(r.full_rows, k));
      b.local = b.full == nullptr ? nullptr : b.full + r.local_first * k;
      b.routed = r.group >= 0 ? bump.Take<int32_t>(CheckedMul(r.n, k)) : b.local;
      b.replay = bump.Take<int16_t>(CheckedMul(p.replay_rows, k));
      if (r.tp_gather) {
        b.tp_gathered = bump.Take<char>(
            CheckedMul(CheckedMul(r.n, k), CheckedMul(TpElementBytes(r),
                                                      static_cast<int64_t>(
                                                          w.c->config.tp))));
      }
      b.capturer = bump.Take<int32_t>(
          CheckedMul(CheckedMul(p.capturer_rows, p.num_layers), k));
      b.readback = host.Take<int32_t>(CheckedMul(CheckedMul(b.readback_rows, p.num_layers), k));
    }
    w.seed_device.assign(dev.size(), nullptr);
    for (size_t d = 0; d < dev.size(); ++d) w.seed_device[d] = dev[d].Take<uint64_t>(1);
    w.seed_host = host.Take<uint64_t>(1);
    for (int phase = 0; phase < 2; ++phase) {
      if (w.segment_count[phase] == 0) continue;
      w.segments_device[phase] = dev[0].Take<CopySegment>(w.segment_count[phase]);
      w.segments_host[phase] = host.Take<CopySegment>(w.segment_count[phase]);
    }
  }

  // Table of the emulated all-gathers: member j's rows land in every
  // member's output at offsets[j].
  static int64_t FillSegments(const std::vector<GatherPlan>& gathers, const Work& w, bool tp,
                              CopySegment* out) {
    int64_t units = 0;
    int64_t s = 0;
    const int64_t k = w.plan.top_k;
    for (const GatherPlan& g : gathers) {
      for (size_t i = 0; i < g.members.size(); ++i) {
        const RankBuffers& dst = w.ranks[static_cast<size_t>(g.members[i])];
        for (size_t j = 0; j < g.members.size(); ++j) {
          const RankBuffers& src = w.ranks[static_cast<size_t>(g.members[j])];
          const RankPlan& rj = w.plan.ranks[static_cast<size_t>(g.members[j])];
          const int64_t elem = tp ? TpElementBytes(rj) : 4;
          const char* from = tp ? (rj.replay_ok ? reinterpret_cast<const char*>(src.replay)
                                                : reinterpret_cast<const char*>(src.routed))
                                : reinterpret_cast<const char*>(src.local);
          char* to = tp ? dst.tp_gathered : reinterpret_cast<char*>(dst.routed);
          CopySegment& seg = out[s++];
          seg.src = reinterpret_cast<const uint16_t*>(from);
          seg.dst = reinterpret_cast<uint16_t*>(to + g.offsets[j] * k * elem);
          seg.units = g.sizes[j] * k * elem / 2;
          units = std::max(units, seg.units);
        }
      }
    }
    return units;
  }

  // NCCL: ncclAllGather for equal sizes, else one ncclBroadcast per root
  // (vLLM's all_gatherv), all in one group since one thread drives all GPUs.
  // The communicator spans the group's distinct GPUs (NCCL allows one rank
  // per GPU): each GPU's first member receives, then copies to the others.
  void NcclGather(const GatherPlan& g, const Work& w, bool tp) {
    const int64_t k = w.plan.top_k;
    auto input = [&](size_t j) -> const char* {
      const RankBuffers& b = w.ranks[static_cast<size_t>(g.members[j])];
      const RankPlan& r = w.plan.ranks[static_cast<size_t>(g.members[j])];
      if (!tp) return reinterpret_cast<const char*>(b.local);
      return r.replay_ok ? reinterpret_cast<const char*>(b.replay)
                         : reinterpret_cast<const char*>(b.routed);
    };
    auto output = [&](size_t i) -> char* {
      const RankBuffers& b = w.ranks[static_cast<size_t>(g.members[i])];
      return tp ? b.tp_gathered : reinterpret_cast<char*>(b.routed);
    };
    auto stream_of = [&](int dev) { return devices[static_cast<size_t>(dev)].stream; };
    const int64_t elem =
        tp ? TpElementBytes(w.plan.ranks[static_cast<size_t>(g.members[0])]) : 4;
    const int64_t row_bytes = k * elem;
    // comm_devs: the group's GPUs in group-rank order of their first member.
    std::vector<int> member_dev, comm_devs, leader;
    std::vector<size_t> comm_rank;
    for (size_t i = 0; i < g.members.size(); ++i) {
      const int dev = w.ranks[static_cast<size_t>(g.members[i])].device;
      member_dev.push_back(dev);
      const auto it = std::find(comm_devs.begin(), comm_devs.end(), dev);
      comm_rank.push_back(static_cast<size_t>(it - comm_devs.begin()));
      if (it == comm_devs.end()) {
        comm_devs.push_back(dev);
        leader.push_back(static_cast<int>(i));
      }
    }
    auto copy = [&](char* to, const char* from, int64_t bytes, int dev) {
      if (bytes <= 0) return;
      R3_CUDA(cudaSetDevice(dev));
      R3_CUDA(cudaMemcpyAsync(to, from, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                              stream_of(dev)));
    };
    if (comm_devs.size() == 1) {
      for (size_t i = 0; i < g.members.size(); ++i) {
        for (size_t j = 0; j < g.members.size(); ++j) {
          copy(output(i) + g.offsets[j] * row_bytes, input(j), g.sizes[j] * row_bytes,
               member_dev[i]);
        }
      }
      return;
    }
    const std::vector<ncclComm_t>& comm = Comms(comm_devs);
    R3_NCCL(ncclGroupStart());
    if (g.equal_sizes && comm_devs.size() == g.members.size()) {
      const size_t bytes = static_cast<size_t>(g.sizes[0] * row_bytes);
      for (size_t i = 0; i < g.members.size() && bytes > 0; ++i) {
        R3_NCCL(ncclAllGather(input(i), output(i), bytes, ncclInt8, comm[i],
                              stream_of(member_dev[i])));
      }
    } else {
      int64_t calls = 0;
      for (size_t j = 0; j < g.members.size(); ++j) {
        const size_t bytes = static_cast<size_t>(g.sizes[j] * row_bytes);
        if (bytes == 0) continue;
        // Bounded groups: NCCL caps the operations of one group.
        if (calls >= 1024) {
          R3_NCCL(ncclGroupEnd());
          R3_NCCL(ncclGroupStart());
          calls = 0;
        }
        calls += static_cast<int64_t>(comm_devs.size());
        for (size_t e = 0; e < comm_devs.size(); ++e) {
          char* recv = output(static_cast<size_t>(leader[e])) + g.offsets[j] * row_bytes;
          R3_NCCL(ncclBroadcast(e == comm_rank[j] ? input(j) : recv, recv, bytes, ncclInt8,
                                static_cast<int>(comm_rank[j]), comm[e],
                                stream_of(comm_devs[e])));
        }
      }
    }
    R3_NCCL(ncclGroupEnd());
    // The other members on each GPU get the gathered tensor from its leader.
    for (size_t i = 0; i < g.members.size(); ++i) {
      const size_t leader_i = static_cast<size_t>(leader[comm_rank[i]]);
      if (leader_i != i) copy(output(i), output(leader_i), g.total * row_bytes, member_dev[i]);
    }
  }

  void Upload(Work& w) {
    *w.seed_host = w.seed;
    for (size_t d = 0; d < w.seed_device.size(); ++d) {
      if (!w.nccl && d > 0) break;
      R3_CUDA(cudaSetDevice(devices[d].id));
      R3_CUDA(cudaMemcpyAsync(w.seed_device[d], w.seed_host, sizeof(uint64_t),
                              cudaMemcpyHostToDevice, devices[d].stream));
    }
    for (int phase = 0; phase < 2; ++phase) {
      if (w.segment_count[phase] == 0) continue;
      w.segment_units[phase] = FillSegments(phase == 0 ? w.plan.gathers : w.plan.tp_gathers, w,
                                            phase == 1, w.segments_host[phase]);
      R3_CUDA(cudaSetDevice(devices[0].id));
      R3_CUDA(cudaMemcpyAsync(w.segments_device[phase], w.segments_host[phase],
                              sizeof(CopySegment) * static_cast<size_t>(w.segment_count[phase]),
                              cudaMemcpyHostToDevice, devices[0].stream));
    }
  }

  // The step itself: fill, SP chunk (a view), dispatch all-gather, stand-in
  // kernel, TP all-gather, capture, read back. Graph-capturable when
  // emulated.
  void Enqueue(const Work& w) {
    const Plan& p = w.plan;
    const int64_t k = p.top_k;
    auto stream = [&](const RankBuffers& b) {
      R3_CUDA(cudaSetDevice(devices[static_cast<size_t>(b.device)].id));
      return devices[static_cast<size_t>(b.device)].stream;
    };
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      const RankPlan& r = p.ranks[i];
      const RankBuffers& b = w.ranks[i];
      cudaStream_t s = stream(b);
      LaunchFill(b.full, r.full_rows, r.real_rows, k, r.dp,
                 w.seed_device[static_cast<size_t>(b.device)], p.id_space, s);
      LaunchSet(b.capturer, b.readback_rows * p.num_layers * k, kUnwritten, s);
    }
    if (w.nccl) {
      for (const GatherPlan& g : p.gathers) NcclGather(g, w, /*tp=*/false);
    } else {
      stream(w.ranks[0]);
      LaunchCopySegments(w.segments_device[0], w.segment_count[0], w.segment_units[0],
                         devices[0].stream);
    }
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      const RankPlan& r = p.ranks[i];
      const RankBuffers& b = w.ranks[i];
      // vLLM's host-side check: never hand the kernel more rows than the buffer holds.
      if (r.replay_ok) LaunchReplayWrite(b.routed, r.n, k, b.replay, stream(b));
    }
    if (w.nccl) {
      for (const GatherPlan& g : p.tp_gathers) NcclGather(g, w, /*tp=*/true);
    } else {
      stream(w.ranks[0]);
      LaunchCopySegments(w.segments_device[1], w.segment_count[1], w.segment_units[1],
                         devices[0].stream);
    }
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      const RankPlan& r = p.ranks[i];
      const RankBuffers& b = w.ranks[i];
      cudaStream_t s = stream(b);
      if (r.capture) {
        const int64_t rows = r.capture_end - r.capture_start;
        const bool narrow = r.replay_ok;
        if (r.tp_gather && narrow) {
          LaunchCapture(reinterpret_cast<const int16_t*>(b.tp_gathered), r.capture_start, rows,
                        k, b.capturer, p.num_layers, p.layer, p.layer_stride_bug, s);
        } else if (r.tp_gather) {
          LaunchCapture(reinterpret_cast<const int32_t*>(b.tp_gathered), r.capture_start, rows,
                        k, b.capturer, p.num_layers, p.layer, p.layer_stride_bug, s);
        } else if (narrow) {
          LaunchCapture(b.replay, r.capture_start, rows, k, b.capturer, p.num_layers, p.layer,
                        p.layer_stride_bug, s);
        } else {
          LaunchCapture(b.routed, r.capture_start, rows, k, b.capturer, p.num_layers, p.layer,
                        p.layer_stride_bug, s);
        }
      }
      R3_CUDA(cudaMemcpyAsync(b.readback, b.capturer,
                              static_cast<size_t>(b.readback_rows * p.num_layers * k) * 4,
                              cudaMemcpyDeviceToHost, s));
    }
  }

  void Reserve(const std::vector<Bump>& dev, const Bump& host) {
    for (size_t d = 0; d < devices.size(); ++d) {
      Device& device = devices[d];
      if (dev[d].used() <= device.capacity) continue;
      R3_CUDA(cudaSetDevice(device.id));
      R3_CUDA(cudaDeviceSynchronize());
      if (device.arena != nullptr) R3_CUDA(cudaFree(device.arena));
      device.arena = nullptr;
      const int64_t want = std::max<int64_t>(dev[d].used() + dev[d].used() / 4, int64_t{64} << 20);
      R3_CUDA(cudaMalloc(&device.arena, static_cast<size_t>(want)));
      device.capacity = want;
    }
    if (host.used() > host_capacity) {
      if (host_arena != nullptr) R3_CUDA(cudaFreeHost(host_arena));
      host_arena = nullptr;
      const int64_t want = std::max<int64_t>(host.used() + host.used() / 4, int64_t{16} << 20);
      R3_CUDA(cudaMallocHost(&host_arena, static_cast<size_t>(want)));
      host_capacity = want;
    }
  }

  void Synchronize() {
    for (Device& d : devices) {
      R3_CUDA(cudaSetDevice(d.id));
      R3_CUDA(cudaStreamSynchronize(d.stream));
    }
  }

  GpuCaseResult Judge(const Work& w) const {
    std::vector<Readback> readback;
    for (const RankBuffers& b : w.ranks) readback.push_back({b.readback, b.readback_rows});
    Decoded decoded = Decode(*w.c, w.plan, w.host, w.seed, readback);
    sut::Observation obs = w.host;
    obs.kernel_rows = 0;
    for (size_t i = 0; i < obs.ranks.size(); ++i) {
      sut::RankObservation& r = obs.ranks[i];
      const RankPlan& p = w.plan.ranks[i];
      r.n = p.n;
      obs.kernel_rows = std::max(obs.kernel_rows, p.n);
      const std::string dev = "cuda:" + std::to_string(w.ranks[i].device);
      r.replay_error = p.replay_ok ? std::string()
                                   : "ValueError: Routing replay buffer was initialized for " +
                                         std::to_string(w.plan.replay_rows) + " tokens on " +
                                         dev + ", but the kernel received " +
                                         std::to_string(p.n) + " tokens on " + dev + ".";
      r.captured = std::move(decoded.captured[i]);
      if (!p.error.empty()) {
        r.branch = sut::Branch::kError;
        r.error = p.error;
      }
    }
    GpuCaseResult out;
    out.result = check::JudgeObservation(*w.c, std::move(obs));
    out.host = w.host;
    out.seed = w.seed;
    out.layer = w.plan.layer;
    out.mode = ModeName(w);
    out.steps = 1;
    out.values_checked = decoded.values_checked;
    out.wrong_values = decoded.wrong_values;
    out.first_mismatch = decoded.first_mismatch;
    // A wrong value the observation cannot show (a cell outside the captured
    // rows, another layer) still fails the case.
    if (out.wrong_values > 0 && out.result.verdict.ok()) {
      const Mismatch& m = *out.first_mismatch;
      check::Violation v;
      v.invariant = check::Invariant::kRowsExact;
      v.dp = m.dp;
      v.tp = m.tp;
      v.message = "gpu: " + std::to_string(out.wrong_values) +
                  " wrong values in the capturer buffer, first at row " + std::to_string(m.row) +
                  " layer " + std::to_string(m.layer) + " k " + std::to_string(m.k) + ": got " +
                  std::to_string(m.got) + ", expected " + std::to_string(m.expected);
      out.result.verdict.violations.push_back(std::move(v));
      out.result.explained.push_back(nullptr);
    }
    return out;
  }

  // Measures, then allocates, a batch; returns false when it does not fit.
  bool Fits(std::vector<Work>& works) {
    std::vector<Bump> dev(devices.size());
    Bump host;
    for (Work& w : works) Allocate(w, dev, host);
    for (const Bump& b : dev) {
      if (b.used() > options.memory_limit) return false;
    }
    return true;
  }

  void Place(std::vector<Work>& works) {
    std::vector<Bump> measure(devices.size());
    Bump host_measure;
    for (Work& w : works) Allocate(w, measure, host_measure);
    Reserve(measure, host_measure);
    std::vector<Bump> dev;
    for (Device& d : devices) dev.emplace_back(d.arena);
    Bump host(host_arena);
    for (Work& w : works) Allocate(w, dev, host);
  }

  std::vector<GpuCaseResult> RunWorks(std::vector<Work>& works) {
    Place(works);
    for (Work& w : works) {
      Upload(w);
      Enqueue(w);
    }
    Synchronize();
    std::vector<GpuCaseResult> out;
    for (const Work& w : works) out.push_back(Judge(w));
    return out;
  }

  GpuCaseResult RunGraph(const Case& c) {
    std::vector<Work> works;
    works.push_back(Prepare(c));
    Work& w = works[0];
    if (!Fits(works)) throw TooLarge(c);
    Place(works);
    const uint64_t base_seed = w.seed;
    Upload(w);
    cudaStream_t s = devices[0].stream;
    R3_CUDA(cudaSetDevice(devices[0].id));
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    R3_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    try {
      Enqueue(w);
    } catch (...) {
      cudaStreamEndCapture(s, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    R3_CUDA(cudaStreamEndCapture(s, &graph));
    R3_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    std::optional<GpuCaseResult> kept;  // the first failing replay, else the first
    int64_t steps = 0, checked = 0, wrong = 0;
    std::optional<Mismatch> first;
    for (int replay = 0; replay < std::max(options.graph_replays, 1); ++replay) {
      // Same graph, same buffer addresses; only the fill seed changes.
      w.seed = replay == 0 ? base_seed : Mix64(base_seed + static_cast<uint64_t>(replay));
      *w.seed_host = w.seed;
      R3_CUDA(cudaMemcpyAsync(w.seed_device[0], w.seed_host, sizeof(uint64_t),
                              cudaMemcpyHostToDevice, s));
      R3_CUDA(cudaGraphLaunch(exec, s));
      R3_CUDA(cudaStreamSynchronize(s));
      GpuCaseResult one = Judge(w);
      ++steps;
      checked += one.values_checked;
      wrong += one.wrong_values;
      if (!first) first = one.first_mismatch;
      if (!kept || (kept->Passes() && !one.Passes())) kept = std::move(one);
    }
    kept->steps = steps;
    kept->values_checked = checked;
    kept->wrong_values = wrong;
    kept->first_mismatch = first;
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return std::move(*kept);
  }

  static GpuError TooLarge(const Case& c) {
    (void)c;
    return GpuError("case needs more GPU memory than the limit (--gpu memory_limit)");
  }

  std::vector<GpuCaseResult> RunBatch(std::span<const Case> cases) {
    std::vector<GpuCaseResult> out;
    if (options.graph) {
      for (const Case& c : cases) out.push_back(RunGraph(c));
      return out;
    }
    std::vector<Work> batch;
    auto flush = [&] {
      if (batch.empty()) return;
      for (GpuCaseResult& r : RunWorks(batch)) out.push_back(std::move(r));
      batch.clear();
    };
    for (const Case& c : cases) {
      batch.push_back(Prepare(c));
      if (Fits(batch)) continue;
      Work last = std::move(batch.back());
      batch.pop_back();
      flush();
      batch.push_back(std::move(last));
      if (!Fits(batch)) throw TooLarge(c);
    }
    flush();
    return out;
  }
};

Availability ProbeGpus() {
  Availability a;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    a.detail = cudaGetErrorString(e);
    cudaGetLastError();
    return a;
  }
  if (count == 0) {
    a.detail = "no CUDA device";
    return a;
  }
  a.devices = count;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    a.detail += (i ? ", " : "") + std::string(prop.name);
  }
  return a;
}

Runner::Runner(GpuOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Runner::~Runner() = default;

std::vector<GpuCaseResult> Runner::RunBatch(std::span<const Case> cases) {
  return impl_->RunBatch(cases);
}

GpuCaseResult Runner::Run(const Case& c) { return std::move(impl_->RunBatch({&c, 1})[0]); }

int Runner::devices() const { return static_cast<int>(impl_->devices.size()); }
const GpuOptions& Runner::options() const { return impl_->options; }

}  // namespace r3::gpu
