#include "r3/gpu/step.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "r3/case/checked_math.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/fill.h"
#include "r3/gpu/internal/cuda_check.h"
#include "r3/sut/sut.h"

namespace r3::gpu::internal {
namespace {

enum Table { kFill, kSet, kDispatchSegments, kReplay, kTpSegments, kCapture, kJudge, kTables };

int64_t TpElementBytes(const RankPlan& r) { return r.replay_ok ? 2 : 4; }

int64_t Align(int64_t bytes) { return CeilDiv(bytes, kAlign) * kAlign; }

// The gpu-skipped-collective mutant: a group's last member skips the
// all-gather (a group of one has no peer to leave waiting).
bool LastMemberSkips(const Plan& p, const GatherPlan& g) {
  return (p.gather_bugs & sut::kLastMemberSkipsBug) != 0 && g.members.size() >= 2;
}

}  // namespace

struct Step::Tables {
  std::vector<uint64_t> seeds;
  int64_t counters = 0;
  std::vector<FillTask> fill;
  std::vector<SetTask> set;
  std::vector<CopySegment> segments[2];
  std::vector<ReplayTask> replay;
  std::vector<CaptureTask> capture;
  std::vector<JudgeTask> judge;
  int64_t max_work[kTables] = {};

  void Note(Table t, int64_t work) { max_work[t] = std::max(max_work[t], work); }
};

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

void Step::BuildTables(std::vector<Work>& works) {
  std::vector<Tables> tables(devices_.size());
  for (Work& w : works) {
    const Plan& p = w.plan;
    const int64_t k = p.top_k;
    w.seed_index.assign(devices_.size(), -1);
    for (const RankBuffers& b : w.ranks) {
      Tables& t = tables[static_cast<size_t>(b.device)];
      int64_t& slot = w.seed_index[static_cast<size_t>(b.device)];
      if (slot < 0) {
        slot = static_cast<int64_t>(t.seeds.size());
        t.seeds.push_back(w.seed);
      }
    }
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      const RankPlan& r = p.ranks[i];
      RankBuffers& b = w.ranks[i];
      Tables& t = tables[static_cast<size_t>(b.device)];
      const int64_t seed = w.seed_index[static_cast<size_t>(b.device)];
      t.fill.push_back({b.full, r.full_rows, r.real_rows, k, r.dp, p.id_space, seed});
      t.Note(kFill, r.full_rows * k);
      const int64_t checked = b.readback_rows * p.num_layers * k;
      t.set.push_back({b.capturer, checked});
      t.Note(kSet, checked);
      // vLLM's host-side check: never hand the kernel more rows than the
      // buffer holds.
      if (r.replay_ok) {
        t.replay.push_back({b.routed, b.replay, r.n * k});
        t.Note(kReplay, r.n * k);
      }
      if (r.capture) {
        const int64_t rows = r.capture_end - r.capture_start;
        const bool narrow = r.replay_ok;
        const char* src = r.tp_gather ? b.tp_gathered
                          : narrow     ? reinterpret_cast<const char*>(b.replay)
                                       : reinterpret_cast<const char*>(b.routed);
        const int32_t bytes = narrow ? 2 : 4;
        t.capture.push_back({src + r.capture_start * k * bytes, b.capturer, rows, k, p.num_layers,
                             p.layer, bytes, p.capture_bugs});
        t.Note(kCapture, rows * k);
      }
      b.counter = t.counters++;
      t.judge.push_back({b.capturer, b.readback_rows, p.num_layers, k, p.layer,
                         w.c->step.padded[static_cast<size_t>(r.dp)], r.dp, p.id_space, seed,
                         b.counter});
      t.Note(kJudge, checked);
    }
    if (w.nccl) continue;
    // Emulated collectives: member j's rows land in every member's output
    // at offsets[j], as device-to-device copies on GPU 0.
    for (int phase = 0; phase < 2; ++phase) {
      const bool tp = phase == 1;
      for (const GatherPlan& g : tp ? p.tp_gathers : p.gathers) {
        if (LastMemberSkips(p, g)) {
          throw GpuError("gpu: rank " + std::to_string(g.members.back()) +
                         " skips the all-gather its group runs; on separate GPUs this hangs "
                         "(gpu-skipped-collective)");
        }
        for (size_t i = 0; i < g.members.size(); ++i) {
          const RankBuffers& dst = w.ranks[static_cast<size_t>(g.members[i])];
          for (size_t j = 0; j < g.members.size(); ++j) {
            const RankBuffers& src = w.ranks[static_cast<size_t>(g.members[j])];
            const RankPlan& rj = p.ranks[static_cast<size_t>(g.members[j])];
            const int64_t elem = tp ? TpElementBytes(rj) : 4;
            const char* from = tp ? (rj.replay_ok ? reinterpret_cast<const char*>(src.replay)
                                                  : reinterpret_cast<const char*>(src.routed))
                                  : reinterpret_cast<const char*>(src.local);
            char* to = tp ? dst.tp_gathered : reinterpret_cast<char*>(dst.routed);
            CopySegment seg;
            seg.src = reinterpret_cast<const uint16_t*>(from);
            seg.dst = reinterpret_cast<uint16_t*>(to + g.offsets[j] * k * elem);
            seg.units = g.sizes[j] * k * elem / 2;
            tables[0].segments[phase].push_back(seg);
            tables[0].Note(tp ? kTpSegments : kDispatchSegments, seg.units);
          }
        }
      }
    }
  }

  // One blob per GPU: [seeds | counters] [fill] [set] [segments] [replay]
  // [segments] [capture] [judge], uploaded with one copy.
  layout_.assign(devices_.size(), {});
  int64_t pinned_total = 0;
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Tables& t = tables[d];
    Layout& l = layout_[d];
    l.seeds = static_cast<int64_t>(t.seeds.size());
    l.counters = t.counters;
    l.header_bytes = (l.seeds + l.counters) * 8;
    const int64_t sizes[kTables] = {
        static_cast<int64_t>(t.fill.size() * sizeof(FillTask)),
        static_cast<int64_t>(t.set.size() * sizeof(SetTask)),
        static_cast<int64_t>(t.segments[0].size() * sizeof(CopySegment)),
        static_cast<int64_t>(t.replay.size() * sizeof(ReplayTask)),
        static_cast<int64_t>(t.segments[1].size() * sizeof(CopySegment)),
        static_cast<int64_t>(t.capture.size() * sizeof(CaptureTask)),
        static_cast<int64_t>(t.judge.size() * sizeof(JudgeTask))};
    const int64_t counts[kTables] = {
        static_cast<int64_t>(t.fill.size()),       static_cast<int64_t>(t.set.size()),
        static_cast<int64_t>(t.segments[0].size()), static_cast<int64_t>(t.replay.size()),
        static_cast<int64_t>(t.segments[1].size()), static_cast<int64_t>(t.capture.size()),
        static_cast<int64_t>(t.judge.size())};
    int64_t offset = Align(l.header_bytes);
    for (int i = 0; i < kTables; ++i) {
      l.offset[i] = offset;
      l.count[i] = counts[i];
      l.max_work[i] = t.max_work[i];
      offset += Align(sizes[i]);
    }
    l.total_bytes = offset;
    l.pinned_offset = pinned_total;
    pinned_total += offset;
  }
  pinned_base_ = pinned_.Get(std::max<int64_t>(pinned_total, 1));
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Tables& t = tables[d];
    Layout& l = layout_[d];
    l.device_base = devices_[d].Tables(std::max<int64_t>(l.total_bytes, 1));
    char* blob = pinned_base_ + l.pinned_offset;
    std::memcpy(blob, t.seeds.data(), t.seeds.size() * 8);
    std::memset(blob + l.seeds * 8, 0, static_cast<size_t>(l.counters * 8));
    auto put = [&](Table i, const auto& v) {
      std::memcpy(blob + l.offset[i], v.data(), v.size() * sizeof(v[0]));
    };
    put(kFill, t.fill);
    put(kSet, t.set);
    put(kDispatchSegments, t.segments[0]);
    put(kReplay, t.replay);
    put(kTpSegments, t.segments[1]);
    put(kCapture, t.capture);
    put(kJudge, t.judge);
  }
}

void Step::Load(std::vector<Work>& works) {
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
    const Layout& l = layout_[d];
    R3_CUDA(cudaSetDevice(devices_[d].device()));
    R3_CUDA(cudaMemcpyAsync(l.device_base, pinned_base_ + l.pinned_offset,
                            static_cast<size_t>(l.total_bytes), cudaMemcpyHostToDevice,
                            devices_[d].stream()));
  }
}

void Step::UploadHeader() {
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Layout& l = layout_[d];
    if (l.header_bytes == 0) continue;
    char* blob = pinned_base_ + l.pinned_offset;
    std::memset(blob + l.seeds * 8, 0, static_cast<size_t>(l.counters * 8));
    R3_CUDA(cudaSetDevice(devices_[d].device()));
    R3_CUDA(cudaMemcpyAsync(l.device_base, blob, static_cast<size_t>(l.header_bytes),
                            cudaMemcpyHostToDevice, devices_[d].stream()));
  }
}

void Step::EnqueuePhases() {
  std::vector<cudaStream_t> streams;
  for (const DeviceArena& a : devices_) streams.push_back(a.stream());
  auto table = [&](size_t d, Table t) { return layout_[d].device_base + layout_[d].offset[t]; };
  auto seeds = [&](size_t d) { return reinterpret_cast<const uint64_t*>(layout_[d].device_base); };
  auto each_device = [&](auto&& launch) {
    for (size_t d = 0; d < devices_.size(); ++d) {
      R3_CUDA(cudaSetDevice(devices_[d].device()));
      launch(d, layout_[d], streams[d]);
    }
  };
  auto gathers = [&](bool tp) {
    R3_CUDA(cudaSetDevice(devices_[0].device()));
    const Table t = tp ? kTpSegments : kDispatchSegments;
    LaunchCopySegments(reinterpret_cast<const CopySegment*>(table(0, t)), layout_[0].count[t],
                       layout_[0].max_work[t], streams[0]);
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
        collectives_.Gather(g, io, streams, skipped);
      }
    }
  };
  each_device([&](size_t d, const Layout& l, cudaStream_t s) {
    LaunchFills(reinterpret_cast<const FillTask*>(table(d, kFill)), l.count[kFill],
                l.max_work[kFill], seeds(d), s);
    LaunchSets(reinterpret_cast<const SetTask*>(table(d, kSet)), l.count[kSet], l.max_work[kSet],
               s);
  });
  gathers(/*tp=*/false);
  each_device([&](size_t d, const Layout& l, cudaStream_t s) {
    LaunchReplayWrites(reinterpret_cast<const ReplayTask*>(table(d, kReplay)), l.count[kReplay],
                       l.max_work[kReplay], s);
  });
  gathers(/*tp=*/true);
  each_device([&](size_t d, const Layout& l, cudaStream_t s) {
    LaunchCaptures(reinterpret_cast<const CaptureTask*>(table(d, kCapture)), l.count[kCapture],
                   l.max_work[kCapture], s);
    LaunchJudges(reinterpret_cast<const JudgeTask*>(table(d, kJudge)), l.count[kJudge],
                 l.max_work[kJudge], seeds(d),
                 reinterpret_cast<unsigned long long*>(l.device_base + l.seeds * 8), s);
  });
}

void Step::EnqueueCounterDownload() {
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Layout& l = layout_[d];
    if (l.counters == 0) continue;
    R3_CUDA(cudaSetDevice(devices_[d].device()));
    R3_CUDA(cudaMemcpyAsync(pinned_base_ + l.pinned_offset + l.seeds * 8,
                            l.device_base + l.seeds * 8, static_cast<size_t>(l.counters * 8),
                            cudaMemcpyDeviceToHost, devices_[d].stream()));
  }
}

void Step::Wait() {
  std::vector<cudaStream_t> streams;
  std::vector<int> ids;
  for (const DeviceArena& a : devices_) {
    streams.push_back(a.stream());
    ids.push_back(a.device());
  }
  collectives_.Wait(streams, ids);
}

void Step::Run(std::vector<Work>& works) {
  Load(works);
  EnqueuePhases();
  EnqueueCounterDownload();
  Wait();
}

void Step::SetSeed(Work& w, uint64_t seed) {
  w.seed = seed;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (w.seed_index[d] < 0) continue;
    uint64_t* seeds = reinterpret_cast<uint64_t*>(pinned_base_ + layout_[d].pinned_offset);
    seeds[w.seed_index[d]] = seed;
  }
}

int64_t Step::WrongValues(const Work& w, size_t rank) const {
  const RankBuffers& b = w.ranks[rank];
  const Layout& l = layout_[static_cast<size_t>(b.device)];
  uint64_t count = 0;
  std::memcpy(&count, pinned_base_ + l.pinned_offset + (l.seeds + b.counter) * 8, 8);
  return static_cast<int64_t>(count);
}

std::vector<int32_t> Step::ReadCapturer(const Work& w, size_t rank) const {
  const RankBuffers& b = w.ranks[rank];
  std::vector<int32_t> out(
      static_cast<size_t>(b.readback_rows * w.plan.num_layers * w.plan.top_k));
  R3_CUDA(cudaSetDevice(devices_[static_cast<size_t>(b.device)].device()));
  R3_CUDA(cudaMemcpy(out.data(), b.capturer, out.size() * sizeof(int32_t),
                     cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace r3::gpu::internal
