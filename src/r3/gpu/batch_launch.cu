#include "r3/gpu/batch_launch.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <type_traits>

#include "r3/case/checked_math.h"
#include "r3/case/parallel_for.h"
#include "r3/case/usable_cores.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/fill.h"
#include "r3/gpu/internal/cuda_check.h"
#include "r3/sut/sut.h"

namespace r3::gpu::internal {
namespace {

// The step's phases in launch order, one task table each on every GPU;
// kPhases below says what each one runs.
enum Phase : int {
  kFill,            // each rank's rows, SP padding poisoned
  kSet,             // each capturer's checked cells unwritten
  kDispatchGatherIn,  // emulated dispatch all-gather: every member's rows to the first
  kDispatchGather,    // the dispatch all-gather (emulated: the first's output to the rest)
  kReplay,          // the stand-in MoE kernel's replay buffer
  kTpGatherIn,  // emulated TP all-gather: every member's rows to the first
  kTpGather,    // sp-tp-gather's all-gather over the TP group (emulated: the rest)
  kCapture,         // each rank's capture() into its capturer
  kJudge,           // each capturer's wrong values counted
  kPhaseCount,
};

// Which all-gather a phase is: its table holds the emulated cases' copies
// (on GPU 0), and the NCCL cases' groups run after it.
enum class AllGather : uint8_t { kNone, kDispatch, kTp };

// What a phase's launch reads on one GPU: its table in the blob and the
// blob's seeds and counters.
struct PhaseArgs {
  const char* table = nullptr;
  int64_t count = 0;
  int64_t max_work = 0;
  const uint64_t* seeds = nullptr;
  unsigned long long* counters = nullptr;
  cudaStream_t stream = nullptr;

  template <typename Task>
  const Task* Tasks() const {
    return reinterpret_cast<const Task*>(table);
  }
};

// A task type's tag: a phase names its tasks' type by the tag's address,
// which Tables::Add checks at compile time.
template <typename Task>
constexpr char kTaskType = 0;

// One phase: its table, its tasks' type and its launch.
struct PhaseSpec {
  Phase table;
  const char* task;  // &kTaskType<T>
  AllGather all_gather = AllGather::kNone;
  void (*launch)(const PhaseArgs& at);
};

void LaunchSegments(const PhaseArgs& at) {
  LaunchCopySegments(at.Tasks<CopySegment>(), at.count, at.max_work, at.stream);
}

// The phase list: the launch order, and the order of the tables in a GPU's
// blob.
constexpr PhaseSpec kPhases[kPhaseCount] = {
    {.table = kFill,
     .task = &kTaskType<FillTask>,
     .launch = [](const PhaseArgs& at) {
       LaunchFills(at.Tasks<FillTask>(), at.count, at.max_work, at.seeds, at.stream);
     }},
    {.table = kSet,
     .task = &kTaskType<SetTask>,
     .launch = [](const PhaseArgs& at) {
       LaunchSets(at.Tasks<SetTask>(), at.count, at.max_work, at.stream);
     }},
    {.table = kDispatchGatherIn, .task = &kTaskType<CopySegment>, .launch = LaunchSegments},
    {.table = kDispatchGather,
     .task = &kTaskType<CopySegment>,
     .all_gather = AllGather::kDispatch,
     .launch = LaunchSegments},
    {.table = kReplay,
     .task = &kTaskType<ReplayTask>,
     .launch = [](const PhaseArgs& at) {
       LaunchReplayWrites(at.Tasks<ReplayTask>(), at.count, at.max_work, at.stream);
     }},
    {.table = kTpGatherIn, .task = &kTaskType<CopySegment>, .launch = LaunchSegments},
    {.table = kTpGather,
     .task = &kTaskType<CopySegment>,
     .all_gather = AllGather::kTp,
     .launch = LaunchSegments},
    {.table = kCapture,
     .task = &kTaskType<CaptureTask>,
     .launch = [](const PhaseArgs& at) {
       LaunchCaptures(at.Tasks<CaptureTask>(), at.count, at.max_work, at.stream);
     }},
    {.table = kJudge,
     .task = &kTaskType<JudgeTask>,
     .launch = [](const PhaseArgs& at) {
       LaunchJudges(at.Tasks<JudgeTask>(), at.count, at.max_work, at.seeds, at.counters,
                    at.stream);
     }},
};

constexpr bool InPhaseOrder() {
  for (int i = 0; i < kPhaseCount; ++i) {
    if (kPhases[i].table != i) return false;
  }
  return true;
}
static_assert(InPhaseOrder(), "kPhases lists the phases in Phase order");

// One phase's tasks on one GPU, as the bytes the blob holds.
struct TaskTable {
  std::vector<char> bytes;
  int64_t count = 0;
  int64_t max_work = 0;  // the largest task's element count (it sizes the grid)
};

// One GPU's share of a batch: its cases' seeds, its counters and a task
// table per phase.
struct Tables {
  std::vector<uint64_t> seeds;
  int64_t counters = 0;
  TaskTable phase[kPhaseCount];

  template <Phase P, typename Task>
  void Add(const Task& task, int64_t work) {
    static_assert(kPhases[P].task == &kTaskType<Task>, "a task of another phase's type");
    static_assert(std::is_trivially_copyable_v<Task>);
    TaskTable& t = phase[P];
    const char* first = reinterpret_cast<const char*>(&task);
    t.bytes.insert(t.bytes.end(), first, first + sizeof(Task));
    ++t.count;
    t.max_work = std::max(t.max_work, work);
  }
};

int64_t TpElementBytes(const RankPlan& r) { return r.replay_ok ? 2 : 4; }

int64_t Align(int64_t bytes) { return CeilDiv(bytes, kAlign) * kAlign; }

// The gpu-skipped-collective mutant: a group's last member skips the
// all-gather (a group of one has no peer to leave waiting).
bool LastMemberSkips(const Plan& p, const GatherPlan& g) {
  return (p.gather_bugs & sut::kLastMemberSkipsBug) != 0 && g.members.size() >= 2;
}

// Emulated collectives, on GPU 0 in two launches: member j's rows land in
// the first member's output at offsets[j] (phase P - 1), then that output is
// copied whole to every other member's (phase P). 2m - 1 copies per group of
// m, not m^2: the verify sampler's groups of up to 128 made 454 copies per
// case, whose tables cost more than the step itself.
template <Phase P>
void AddEmulatedGathers(const Work& w, Tables& gpu0) {
  constexpr bool tp = P == kTpGather;
  constexpr Phase kIn = static_cast<Phase>(P - 1);
  static_assert(kIn == (tp ? kTpGatherIn : kDispatchGatherIn));
  const Plan& p = w.plan;
  const int64_t k = p.top_k;
  const auto output = [&](const RankBuffers& b) {
    return tp ? b.tp_gathered : reinterpret_cast<char*>(b.routed);
  };
  for (const GatherPlan& g : tp ? p.tp_gathers : p.gathers) {
    if (LastMemberSkips(p, g)) {
      throw GpuError("gpu: rank " + std::to_string(g.members.back()) +
                     " skips the all-gather its group runs; on separate GPUs this hangs "
                     "(gpu-skipped-collective)");
    }
    char* first = output(w.ranks[static_cast<size_t>(g.members[0])]);
    int64_t end = 0;  // bytes of the gathered output
    for (size_t j = 0; j < g.members.size(); ++j) {
      const RankBuffers& src = w.ranks[static_cast<size_t>(g.members[j])];
      const RankPlan& rj = p.ranks[static_cast<size_t>(g.members[j])];
      const int64_t elem = tp ? TpElementBytes(rj) : 4;
      const char* from = tp ? (rj.replay_ok ? reinterpret_cast<const char*>(src.replay)
                                            : reinterpret_cast<const char*>(src.routed))
                            : reinterpret_cast<const char*>(src.local);
      CopySegment seg;
      seg.src = reinterpret_cast<const uint16_t*>(from);
      seg.dst = reinterpret_cast<uint16_t*>(first + g.offsets[j] * k * elem);
      seg.units = g.sizes[j] * k * elem / 2;
      gpu0.Add<kIn>(seg, seg.units);
      end = std::max(end, (g.offsets[j] + g.sizes[j]) * k * elem);
    }
    for (size_t i = 1; i < g.members.size(); ++i) {
      CopySegment seg;
      seg.src = reinterpret_cast<const uint16_t*>(first);
      seg.dst = reinterpret_cast<uint16_t*>(output(w.ranks[static_cast<size_t>(g.members[i])]));
      seg.units = end / 2;
      gpu0.Add<P>(seg, seg.units);
    }
  }
}

// Each GPU that holds one of the case's ranks gets its seed once;
// w.seed_index says where.
void AddSeeds(Work& w, std::vector<Tables>& tables) {
  w.seed_index.assign(tables.size(), -1);
  for (const RankBuffers& b : w.ranks) {
    Tables& t = tables[static_cast<size_t>(b.device)];
    int64_t& slot = w.seed_index[static_cast<size_t>(b.device)];
    if (slot < 0) {
      slot = static_cast<int64_t>(t.seeds.size());
      t.seeds.push_back(w.seed);
    }
  }
}

// capture(): the rank's slice of what its router saw (TP-gathered, the
// int16 replay buffer when the kernel ran, else topk_ids) into its capturer.
CaptureTask CaptureOf(const Plan& p, const RankPlan& r, const RankBuffers& b) {
  const int64_t k = p.top_k;
  const bool narrow = r.replay_ok;
  const char* src = r.tp_gather ? b.tp_gathered
                    : narrow     ? reinterpret_cast<const char*>(b.replay)
                                 : reinterpret_cast<const char*>(b.routed);
  const int32_t bytes = narrow ? 2 : 4;
  return {src + r.capture_start * k * bytes, b.capturer, r.capture_end - r.capture_start, k,
          p.num_layers, p.layer, bytes, p.capture_bugs};
}

// Each rank's judge summary slots on its GPU (in case order, before the
// tables are built in parallel).
void AddCounters(Work& w, std::vector<Tables>& tables) {
  for (RankBuffers& b : w.ranks) {
    int64_t& counters = tables[static_cast<size_t>(b.device)].counters;
    b.counter = counters;
    counters += kJudgeSlots;
  }
}

// Every rank's tasks of the per-GPU phases, on its GPU's tables.
void AddRankTasks(const Work& w, std::vector<Tables>& tables) {
  const Plan& p = w.plan;
  const int64_t k = p.top_k;
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    const RankPlan& r = p.ranks[i];
    const RankBuffers& b = w.ranks[i];
    Tables& t = tables[static_cast<size_t>(b.device)];
    const int64_t seed = w.seed_index[static_cast<size_t>(b.device)];
    t.Add<kFill>(FillTask{b.full, r.full_rows, r.real_rows, k, r.dp, p.id_space, seed},
                 r.full_rows * k);
    const int64_t checked = b.readback_rows * p.num_layers * k;
    t.Add<kSet>(SetTask{b.capturer, checked}, checked);
    // vLLM's host-side check: never hand the kernel more rows than the
    // buffer holds.
    if (r.replay_ok) t.Add<kReplay>(ReplayTask{b.routed, b.replay, r.n * k}, r.n * k);
    if (r.capture) t.Add<kCapture>(CaptureOf(p, r, b), (r.capture_end - r.capture_start) * k);
    t.Add<kJudge>(JudgeTask{b.capturer, b.readback_rows, p.num_layers, k, p.layer,
                            w.c->step.padded[static_cast<size_t>(r.dp)], r.dp, p.id_space, seed,
                            b.counter},
                  checked);
  }
}

// One GPU's blob, `pinned_offset` bytes into the pinned buffer:
// [seeds | counters], then the phases' tables in phase order, each aligned.
// `phases`: the GPU's tasks, in the parts that make up each table.
BlobLayout LayOut(const Tables& t, std::span<const Tables* const> parts, int64_t pinned_offset) {
  BlobLayout l;
  l.seeds = static_cast<int64_t>(t.seeds.size());
  l.counters = t.counters;
  l.header_bytes = (l.seeds + l.counters) * 8;
  int64_t offset = Align(l.header_bytes);
  for (int ph = 0; ph < kPhaseCount; ++ph) {
    BlobLayout::Table table{.offset = offset};
    int64_t bytes = 0;
    for (const Tables* part : parts) {
      const TaskTable& from = part->phase[ph];
      bytes += static_cast<int64_t>(from.bytes.size());
      table.count += from.count;
      table.max_work = std::max(table.max_work, from.max_work);
    }
    l.tables.push_back(table);
    offset += Align(bytes);
  }
  l.total_bytes = offset;
  l.pinned_offset = pinned_offset;
  return l;
}

PhaseArgs ArgsOf(const BlobLayout& l, int phase, cudaStream_t stream) {
  const BlobLayout::Table& t = l.tables[static_cast<size_t>(phase)];
  return {.table = l.device_base + t.offset,
          .count = t.count,
          .max_work = t.max_work,
          .seeds = reinterpret_cast<const uint64_t*>(l.device_base),
          .counters = reinterpret_cast<unsigned long long*>(l.device_base + l.seeds * 8),
          .stream = stream};
}

}  // namespace

Work PrepareWork(const Case& c, const sut::SutOptions& sut_options, bool nccl, int devices) {
  Work w;
  w.c = &c;
  w.host = sut::RunSut(c, sut_options);
  w.seed = CaseSeed(c);
  w.plan = BuildPlan(c, w.host, sut_options.mutants, w.seed);
  w.nccl = nccl;
  w.ranks.resize(w.plan.ranks.size());
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    // Round-robin: rank d*T + t on GPU (d*T + t) % G, so with T = G the TP
    // group spans the GPUs.
    w.ranks[i].device = nccl ? static_cast<int>(i % static_cast<size_t>(devices)) : 0;
    w.ranks[i].readback_rows = ReadbackRows(w.plan, c, i);
  }
  std::vector<Bump> measure(static_cast<size_t>(devices));
  AllocateWork(w, measure);
  for (const Bump& b : measure) w.bytes.push_back(b.used());
  return w;
}

void AllocateWork(Work& w, std::vector<Bump>& bumps) {
  const Plan& p = w.plan;
  const int64_t k = p.top_k;
  for (size_t i = 0; i < w.ranks.size(); ++i) {
    const RankPlan& r = p.ranks[i];
    RankBuffers& b = w.ranks[i];
    Bump& bump = bumps[static_cast<size_t>(b.device)];
    b.full = bump.Take<int32_t>(CheckedMul(r.full_rows, k));
    b.local = b.full == nullptr ? nullptr : b.full + r.local_first * k;
    b.routed = r.group >= 0 ? bump.Take<int32_t>(CheckedMul(r.n, k)) : b.local;
    b.replay = bump.Take<int16_t>(CheckedMul(p.replay_rows, k));
    b.tp_gathered = nullptr;
    if (r.tp_gather) {
      b.tp_gathered = bump.Take<char>(CheckedMul(
          CheckedMul(r.n, k), CheckedMul(TpElementBytes(r), w.c->config.tp)));
    }
    b.capturer = bump.Take<int32_t>(CheckedMul(CheckedMul(p.capturer_rows, p.num_layers), k));
  }
}

void BatchLaunch::BuildTables(std::vector<Work>& works) {
  std::vector<Tables> tables(devices_.size());
  // Seeds and counters in case order; then the task tables of each chunk of
  // cases on its own thread, each chunk's tasks copied to the pinned blob
  // after the chunks before it: the same bytes as one thread makes (a batch
  // of 4096 cases has a million tasks).
  for (Work& w : works) {
    AddSeeds(w, tables);
    AddCounters(w, tables);
  }
  // Eight chunks per thread, as ParallelFor wants, of at least 16 cases.
  const unsigned threads = UsableCores();
  constexpr size_t kCasesPerChunk = 16;
  const size_t chunks =
      std::min<size_t>(size_t{threads} * 8, CeilDiv(works.size(), kCasesPerChunk));
  std::vector<std::vector<Tables>> parts(std::max<size_t>(chunks, 1),
                                         std::vector<Tables>(devices_.size()));
  ParallelFor(parts.size(), threads, [&](size_t c) {
    const size_t first = works.size() * c / parts.size();
    const size_t last = works.size() * (c + 1) / parts.size();
    for (size_t i = first; i < last; ++i) {
      const Work& w = works[i];
      AddRankTasks(w, parts[c]);
      if (w.nccl) continue;
      AddEmulatedGathers<kDispatchGather>(w, parts[c][0]);
      AddEmulatedGathers<kTpGather>(w, parts[c][0]);
    }
  });
  layout_.clear();
  int64_t pinned_total = 0;
  for (size_t d = 0; d < devices_.size(); ++d) {
    std::vector<const Tables*> of_gpu;
    for (const std::vector<Tables>& part : parts) of_gpu.push_back(&part[d]);
    layout_.push_back(LayOut(tables[d], of_gpu, pinned_total));
    pinned_total += layout_.back().total_bytes;
  }
  pinned_base_ = pinned_.Get(std::max<int64_t>(pinned_total, 1));
  // Where each chunk's tasks go: after the earlier chunks' in each table.
  std::vector<std::vector<std::array<int64_t, kPhaseCount>>> at(
      parts.size(), std::vector<std::array<int64_t, kPhaseCount>>(devices_.size()));
  for (size_t d = 0; d < devices_.size(); ++d) {
    const BlobLayout& l = layout_[d];
    char* blob = pinned_base_ + l.pinned_offset;
    std::memcpy(blob, tables[d].seeds.data(), tables[d].seeds.size() * 8);
    std::memset(blob + l.seeds * 8, 0, static_cast<size_t>(l.counters * 8));
    for (int ph = 0; ph < kPhaseCount; ++ph) {
      int64_t offset = l.pinned_offset + l.tables[static_cast<size_t>(ph)].offset;
      for (size_t c = 0; c < parts.size(); ++c) {
        at[c][d][static_cast<size_t>(ph)] = offset;
        offset += static_cast<int64_t>(parts[c][d].phase[ph].bytes.size());
      }
    }
  }
  ParallelFor(parts.size(), threads, [&](size_t c) {
    for (size_t d = 0; d < devices_.size(); ++d) {
      for (int ph = 0; ph < kPhaseCount; ++ph) {
        const std::vector<char>& bytes = parts[c][d].phase[ph].bytes;
        if (bytes.empty()) continue;
        std::memcpy(pinned_base_ + at[c][d][static_cast<size_t>(ph)], bytes.data(), bytes.size());
      }
    }
  });
  for (size_t d = 0; d < devices_.size(); ++d) {
    layout_[d].device_base = devices_[d].Tables(std::max<int64_t>(layout_[d].total_bytes, 1));
  }
}

void BatchLaunch::Load(std::vector<Work>& works) {
  works_ = &works;
  std::vector<Bump> measure(devices_.size());
  for (Work& w : works) AllocateWork(w, measure);
  std::vector<Bump> bumps;
  for (size_t d = 0; d < devices_.size(); ++d) {
    bumps.emplace_back(devices_[d].Data(std::max<int64_t>(measure[d].used(), 1)));
  }
  for (Work& w : works) AllocateWork(w, bumps);
  BuildTables(works);
  for (size_t d = 0; d < devices_.size(); ++d) {
    const BlobLayout& l = layout_[d];
    R3_CUDA(cudaSetDevice(devices_[d].device()));
    R3_CUDA(cudaMemcpyAsync(l.device_base, pinned_base_ + l.pinned_offset,
                            static_cast<size_t>(l.total_bytes), cudaMemcpyHostToDevice,
                            devices_[d].stream()));
  }
}

void BatchLaunch::UploadHeader() {
  for (size_t d = 0; d < devices_.size(); ++d) {
    const BlobLayout& l = layout_[d];
    if (l.header_bytes == 0) continue;
    char* blob = pinned_base_ + l.pinned_offset;
    std::memset(blob + l.seeds * 8, 0, static_cast<size_t>(l.counters * 8));
    R3_CUDA(cudaSetDevice(devices_[d].device()));
    R3_CUDA(cudaMemcpyAsync(l.device_base, blob, static_cast<size_t>(l.header_bytes),
                            cudaMemcpyHostToDevice, devices_[d].stream()));
  }
}

void BatchLaunch::EnqueuePhases() {
  // A run of per-GPU phases goes out GPU by GPU, each GPU's launches in
  // phase order; an all-gather goes out on its own.
  for (int first = 0; first < kPhaseCount;) {
    if (kPhases[first].all_gather != AllGather::kNone) {
      EnqueueGather(first++);
      continue;
    }
    int end = first + 1;
    while (end < kPhaseCount && kPhases[end].all_gather == AllGather::kNone) ++end;
    for (size_t d = 0; d < devices_.size(); ++d) {
      R3_CUDA(cudaSetDevice(devices_[d].device()));
      for (int p = first; p < end; ++p) {
        kPhases[p].launch(ArgsOf(layout_[d], p, devices_[d].stream()));
      }
    }
    first = end;
  }
}

void BatchLaunch::ConnectCollectives() {
  for (int p = 0; p < kPhaseCount; ++p) {
    if (kPhases[p].all_gather != AllGather::kNone) EnqueueGather(p, /*connect_only=*/true);
  }
}

// The emulated cases' copies on GPU 0, then each NCCL case's groups.
void BatchLaunch::EnqueueGather(int phase, bool connect_only) {
  const bool tp = kPhases[phase].all_gather == AllGather::kTp;
  std::vector<cudaStream_t> streams;
  for (const DeviceArena& a : devices_) streams.push_back(a.stream());
  if (!connect_only) {
    R3_CUDA(cudaSetDevice(devices_[0].device()));
    kPhases[phase].launch(ArgsOf(layout_[0], phase, streams[0]));
  }
  for (const Work& w : *works_) {
    if (!w.nccl) continue;
    const int64_t k = w.plan.top_k;
    for (const GatherPlan& g : tp ? w.plan.tp_gathers : w.plan.gathers) {
      GatherIo io;
      for (int m : g.members) {
        const RankBuffers& b = w.ranks[static_cast<size_t>(m)];
        const RankPlan& r = w.plan.ranks[static_cast<size_t>(m)];
        io.device.push_back(b.device);
        io.input.push_back(!tp           ? reinterpret_cast<const char*>(b.local)
                           : r.replay_ok ? reinterpret_cast<const char*>(b.replay)
                                         : reinterpret_cast<const char*>(b.routed));
        io.output.push_back(tp ? b.tp_gathered : reinterpret_cast<char*>(b.routed));
      }
      io.row_bytes =
          k * (tp ? TpElementBytes(w.plan.ranks[static_cast<size_t>(g.members[0])]) : 4);
      const int skipped =
          LastMemberSkips(w.plan, g) ? static_cast<int>(g.members.size()) - 1 : -1;
      if (connect_only) {
        collectives_.Connect(io);
      } else {
        collectives_.Gather(g, io, streams, skipped);
      }
    }
  }
}

void BatchLaunch::EnqueueCounterDownload() {
  for (size_t d = 0; d < devices_.size(); ++d) {
    const BlobLayout& l = layout_[d];
    if (l.counters == 0) continue;
    R3_CUDA(cudaSetDevice(devices_[d].device()));
    R3_CUDA(cudaMemcpyAsync(pinned_base_ + l.pinned_offset + l.seeds * 8,
                            l.device_base + l.seeds * 8, static_cast<size_t>(l.counters * 8),
                            cudaMemcpyDeviceToHost, devices_[d].stream()));
  }
}

void BatchLaunch::Wait() {
  std::vector<cudaStream_t> streams;
  std::vector<int> ids;
  for (const DeviceArena& a : devices_) {
    streams.push_back(a.stream());
    ids.push_back(a.device());
  }
  collectives_.Wait(streams, ids);
}

void BatchLaunch::Run(std::vector<Work>& works) {
  Load(works);
  EnqueuePhases();
  EnqueueCounterDownload();
  Wait();
}

void BatchLaunch::SetSeed(Work& w, uint64_t seed) {
  w.seed = seed;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (w.seed_index[d] < 0) continue;
    uint64_t* seeds = reinterpret_cast<uint64_t*>(pinned_base_ + layout_[d].pinned_offset);
    seeds[w.seed_index[d]] = seed;
  }
}

RankSummary BatchLaunch::Summary(const Work& w, size_t rank) const {
  const RankBuffers& b = w.ranks[rank];
  const BlobLayout& l = layout_[static_cast<size_t>(b.device)];
  uint64_t slots[kJudgeSlots];
  std::memcpy(slots, pinned_base_ + l.pinned_offset + (l.seeds + b.counter) * 8, sizeof slots);
  RankSummary s;
  s.wrong_values = static_cast<int64_t>(slots[kWrongSlot]);
  s.written_rows = static_cast<int64_t>(slots[kWrittenSlot]);
  if (s.wrong_values > 0) {
    s.first_index = static_cast<int64_t>(~slots[kFirstSlot]);
    s.first_got = static_cast<int32_t>(static_cast<uint32_t>(slots[kGotSlot]));
  }
  return s;
}

}  // namespace r3::gpu::internal
