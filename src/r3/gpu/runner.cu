// The batch runner: host work (host SUT, plans, verdicts) on a thread pool,
// one BatchLaunch per batch on the GPUs, judged there.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "r3/case/parallel_for.h"
#include "r3/case/usable_cores.h"
#include "r3/gpu/arena.h"
#include "r3/gpu/batch_launch.h"
#include "r3/gpu/collectives.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/graph_runner.h"
#include "r3/gpu/internal/cuda_check.h"
#include "r3/gpu/kernels.h"

namespace r3::gpu {

using internal::Work;

struct Runner::Impl {
  GpuOptions options;
  std::vector<internal::DeviceArena> devices;
  internal::PinnedArena pinned;
  internal::PinnedArena readback;  // slow cases' pack tables and rows
  // Declared after the arenas: communicators go before the streams.
  internal::Collectives collectives;
  unsigned threads = 1;
  // Nanoseconds per phase (RunnerTimings); atomics: threads add to them.
  struct Clocks {
    std::atomic<int64_t> total{0}, prepare{0}, prepare_wall{0}, tables{0}, step{0}, observe{0}, readback{0},
        decode{0}, summaries_wall{0}, pack_plan{0}, decode_wall{0}, finish_wall{0};
    std::atomic<int64_t> cases{0}, slow_cases{0};
  };
  mutable Clocks clocks;

  static int64_t Since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                t)
        .count();
  }

  static GpuOptions Checked(GpuOptions o) {
    if (o.timeout_ms <= 0) throw GpuError("timeout_ms must be positive");
    if (o.memory_limit <= 0) throw GpuError("memory_limit must be positive");
    return o;
  }

  explicit Impl(GpuOptions opts)
      : options(Checked(std::move(opts))),
        collectives(std::chrono::milliseconds(options.timeout_ms)) {
    // NVLink multicast stays off on shared hosts, unless the user chose.
    setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
    const Availability gpus = ProbeGpus();
    if (!gpus.ok()) throw GpuError("no GPU: " + gpus.detail);
    const int count = options.max_gpus > 0 ? std::min(options.max_gpus, gpus.devices)
                                           : gpus.devices;
    for (int i = 0; i < count; ++i) devices.emplace_back(i);
    threads = options.host_threads > 0 ? static_cast<unsigned>(options.host_threads)
                                       : UsableCores();
  }

  // Ranks go to GPUs with NCCL whenever there are two GPUs and two ranks
  // (graph mode included: one graph per GPU, the all-gathers in it).
  bool UseNccl(const Case& c) const {
    const int64_t ranks = c.config.dp * c.config.tp;
    return options.mode == RankMode::kAuto && devices.size() >= 2 && ranks >= 2;
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

  // The observation once the rows are known: stamped with what the device
  // checked.
  sut::Observation Finish(const Work& w, Decoded decoded) const {
    std::vector<int> device_of;
    for (const internal::RankBuffers& b : w.ranks) device_of.push_back(b.device);
    sut::Observation out = AssembleObservation(w.plan, w.host, std::move(decoded), device_of);
    out.device->seed = w.seed;
    out.device->mode = ModeName(w);
    return out;
  }

  // The works' observations, in order. The device's judge summarised every
  // rank (wrong values, the first of them). A case with no wrong value, whose
  // host SUT claims the model's rows, is known from that alone. The others
  // need their captured rows' identities: per GPU one pack kernel gathers
  // every such rank's capture-layer rows into a staging buffer that comes
  // back in one copy, and the decode runs on the thread pool.
  // full_readback: every checked value comes back instead and the host
  // judges it again.
  void ObserveAll(const internal::BatchLaunch& step, std::span<const Work> works,
                  sut::Observation* out) {
    const auto start = std::chrono::steady_clock::now();
    const bool full = options.full_readback;
    std::vector<std::vector<RankSummary>> summaries(works.size());
    std::vector<uint8_t> slow(works.size(), 0);
    ParallelFor(works.size(), threads, [&](size_t i) {
      const Work& w = works[i];
      std::vector<int64_t> rows;
      int64_t wrong = 0;
      for (size_t r = 0; r < w.ranks.size(); ++r) {
        rows.push_back(w.ranks[r].readback_rows);
        summaries[i].push_back(step.Summary(w, r));
        wrong += summaries[i].back().wrong_values;
      }
      std::optional<std::vector<RowRuns>> captured;
      if (wrong == 0) captured = CapturedWhenAllRight(*w.c, w.plan, w.host, rows);
      if (!captured || full) {
        slow[i] = 1;
        return;
      }
      Decoded decoded;
      decoded.captured = std::move(*captured);
      decoded.values_checked = ValuesChecked(w.plan, rows);
      out[i] = Finish(w, std::move(decoded));
    });
    clocks.summaries_wall += Since(start);
    const auto pack_start = std::chrono::steady_clock::now();
    // Each slow rank's rows in its GPU's staging buffer: the capture-layer
    // rows up to the last the judge saw written (the unwritten rest decode
    // as padding without coming back), or every checked value.
    const auto capture_rows_of = [&](size_t i, size_t r) {
      return CaptureRowsOf(works[i].plan, r, works[i].ranks[r].readback_rows);
    };
    const auto rows_of = [&](size_t i, size_t r) {
      const Work& w = works[i];
      return full ? w.ranks[r].readback_rows * w.plan.num_layers
                  : DecodedRowsOf(summaries[i][r], capture_rows_of(i, r));
    };
    // Per GPU: the pack tasks, and (summary mode) each slow case's row index
    // of the step's rows with the lookups of its captured rows in it.
    struct GpuReadback {
      std::vector<PackTask> packs;
      std::vector<IndexBuildTask> builds;
      std::vector<IndexLookupTask> lookups;
      int64_t values = 0, rows = 0, slots = 0;
      int64_t pack_work = 0, build_work = 0, lookup_work = 0;
    };
    std::vector<GpuReadback> gpus(devices.size());
    // Per slow case and rank: offsets of its values and rows on its GPU.
    std::vector<std::vector<int64_t>> at(works.size()), row_at(works.size());
    for (size_t i = 0; i < works.size(); ++i) {
      if (!slow[i]) continue;
      const Work& w = works[i];
      const int64_t k = w.plan.top_k;
      std::vector<int64_t> table_of(devices.size(), -1);  // slot offset of this case's table
      for (size_t r = 0; r < w.ranks.size(); ++r) {
        const internal::RankBuffers& b = w.ranks[r];
        const size_t d = static_cast<size_t>(b.device);
        GpuReadback& g = gpus[d];
        const int64_t rows = rows_of(i, r);
        at[i].push_back(g.values);
        row_at[i].push_back(g.rows);
        if (rows == 0) continue;
        g.packs.push_back({full ? b.capturer : b.capturer + w.plan.layer * k,
                           reinterpret_cast<int32_t*>(g.values * int64_t{sizeof(int32_t)}), rows,
                           full ? k : w.plan.num_layers * k, k});
        g.pack_work = std::max(g.pack_work, rows * k);
        if (!full) {
          const int64_t slots = IndexSlots(*w.c);
          if (table_of[d] < 0 && (g.slots + slots) * int64_t{sizeof(IndexSlot)} <= options.row_index_bytes) {
            table_of[d] = g.slots;
            for (int64_t dp = 0; dp < w.c->config.dp; ++dp) {
              const int64_t padded = w.c->step.padded[static_cast<size_t>(dp)];
              if (padded == 0) continue;
              g.builds.push_back({reinterpret_cast<IndexSlot*>(g.slots * int64_t{sizeof(IndexSlot)}),
                                  static_cast<uint64_t>(slots - 1), w.seed, dp, padded, k,
                                  w.plan.id_space});
              g.build_work = std::max(g.build_work, padded);
            }
            g.slots += slots;
          }
          IndexLookupTask look;
          look.model_dp = w.plan.ranks[r].dp;
          look.model_rows = w.c->step.padded[static_cast<size_t>(look.model_dp)];
          look.table = table_of[d] < 0 ? nullptr
                                       : reinterpret_cast<const IndexSlot*>(
                                             table_of[d] * int64_t{sizeof(IndexSlot)});
          look.mask = static_cast<uint64_t>(slots - 1);
          look.seed = w.seed;
          look.values = reinterpret_cast<const int32_t*>(g.values * int64_t{sizeof(int32_t)});
          look.found = reinterpret_cast<int64_t*>(g.rows * int64_t{sizeof(int64_t)});
          look.rows = rows;
          look.top_k = k;
          look.id_space = w.plan.id_space;
          g.lookups.push_back(look);
          g.lookup_work = std::max(g.lookup_work, rows);
        }
        g.values += rows * k;
        g.rows += rows;
      }
    }
    clocks.pack_plan += Since(pack_start);
    std::vector<const int32_t*> host_rows(devices.size(), nullptr);
    std::vector<const int64_t*> host_found(devices.size(), nullptr);
    if (std::any_of(slow.begin(), slow.end(), [](uint8_t s) { return s != 0; })) {
      const auto read_start = std::chrono::steady_clock::now();
      // Device, per GPU: [packs | builds | lookups | values | found | tables];
      // the task tables go up in one copy, values and found come back in one.
      // Pinned, per GPU: [packs | builds | lookups | values | found].
      std::vector<int64_t> pinned_at(devices.size());
      int64_t pinned_total = 0;
      struct Offsets {
        int64_t builds, lookups, tasks_end, values, found, tables, end;
      };
      std::vector<Offsets> off(devices.size());
      for (size_t d = 0; d < devices.size(); ++d) {
        const GpuReadback& g = gpus[d];
        Offsets& o = off[d];
        o.builds = Align(static_cast<int64_t>(g.packs.size() * sizeof(PackTask)));
        o.lookups = o.builds + Align(static_cast<int64_t>(g.builds.size() * sizeof(IndexBuildTask)));
        o.tasks_end = o.lookups + static_cast<int64_t>(g.lookups.size() * sizeof(IndexLookupTask));
        o.values = Align(o.tasks_end);
        o.found = o.values + Align(g.values * int64_t{sizeof(int32_t)});
        o.tables = o.found + Align(g.rows * int64_t{sizeof(int64_t)});
        o.end = o.tables + g.slots * int64_t{sizeof(IndexSlot)};
        pinned_at[d] = pinned_total;
        pinned_total += Align(o.tables);
      }
      char* host = readback.Get(std::max<int64_t>(pinned_total, 1));
      for (size_t d = 0; d < devices.size(); ++d) {
        GpuReadback& g = gpus[d];
        if (g.packs.empty()) continue;
        const Offsets& o = off[d];
        internal::DeviceArena& gpu = devices[d];
        char* base = gpu.Readback(o.end);
        const auto moved = [&](auto* p, int64_t region) {
          return reinterpret_cast<decltype(p)>(base + region + reinterpret_cast<intptr_t>(p));
        };
        for (PackTask& p : g.packs) p.dst = moved(p.dst, o.values);
        for (IndexBuildTask& t : g.builds) t.table = moved(t.table, o.tables);
        for (IndexLookupTask& t : g.lookups) {
          if (t.table != nullptr) t.table = moved(t.table, o.tables);
          t.values = moved(t.values, o.values);
          t.found = moved(t.found, o.found);
        }
        char* pin = host + pinned_at[d];
        std::memcpy(pin, g.packs.data(), g.packs.size() * sizeof(PackTask));
        std::memcpy(pin + o.builds, g.builds.data(), g.builds.size() * sizeof(IndexBuildTask));
        std::memcpy(pin + o.lookups, g.lookups.data(), g.lookups.size() * sizeof(IndexLookupTask));
        const cudaStream_t stream = gpu.stream();
        R3_CUDA(cudaSetDevice(gpu.device()));
        R3_CUDA(cudaMemcpyAsync(base, pin, static_cast<size_t>(o.tasks_end),
                                cudaMemcpyHostToDevice, stream));
        if (g.slots > 0) {
          R3_CUDA(cudaMemsetAsync(base + o.tables, 0,
                                  static_cast<size_t>(g.slots * int64_t{sizeof(IndexSlot)}),
                                  stream));
        }
        LaunchPacks(reinterpret_cast<const PackTask*>(base), static_cast<int64_t>(g.packs.size()),
                    g.pack_work, stream);
        LaunchIndexBuilds(reinterpret_cast<const IndexBuildTask*>(base + o.builds),
                          static_cast<int64_t>(g.builds.size()), g.build_work, stream);
        LaunchIndexLookups(reinterpret_cast<const IndexLookupTask*>(base + o.lookups),
                           static_cast<int64_t>(g.lookups.size()), g.lookup_work, stream);
        R3_CUDA(cudaMemcpyAsync(pin + o.values, base + o.values,
                                static_cast<size_t>(o.tables - o.values), cudaMemcpyDeviceToHost,
                                stream));
        host_rows[d] = reinterpret_cast<const int32_t*>(pin + o.values);
        host_found[d] = reinterpret_cast<const int64_t*>(pin + o.found);
      }
      for (const internal::DeviceArena& gpu : devices) {
        R3_CUDA(cudaSetDevice(gpu.device()));
        R3_CUDA(cudaStreamSynchronize(gpu.stream()));
      }
      clocks.readback += Since(read_start);
      // A rank with no rows read back has no place in the staging buffer.
      const auto capture_rows = [&](const Work& w, size_t i, size_t r) -> CaptureRows {
        const int64_t rows = rows_of(i, r);
        if (rows == 0) return {};
        const size_t d = static_cast<size_t>(w.ranks[r].device);
        return {host_rows[d] + at[i][r], rows, full ? nullptr : host_found[d] + row_at[i][r]};
      };
      // Summary mode: each capturing rank's rows decode in chunks on the
      // pool, so that one huge case (a capture where every row is wrong)
      // spreads over every thread; a case's chunks, appended in order, are
      // its runs (AppendRuns keeps the canonical form).
      constexpr int64_t kDecodeRows = 1024;
      struct Chunk {
        size_t work, rank;
        int64_t first, last;
      };
      std::vector<Chunk> chunks;
      std::vector<size_t> chunks_from(works.size() + 1, 0);
      for (size_t i = 0; i < works.size(); ++i) {
        chunks_from[i] = chunks.size();
        if (!slow[i] || full) continue;
        for (size_t r = 0; r < works[i].ranks.size(); ++r) {
          const int64_t rows = rows_of(i, r);
          for (int64_t first = 0; first < rows; first += kDecodeRows) {
            chunks.push_back({i, r, first, std::min(rows, first + kDecodeRows)});
          }
        }
      }
      chunks_from[works.size()] = chunks.size();
      // One host index of the step's rows per case, shared by its chunks.
      std::vector<std::unique_ptr<RowIndex>> index(works.size());
      for (size_t i = 0; i < works.size(); ++i) {
        if (chunks_from[i + 1] > chunks_from[i]) {
          index[i] = std::make_unique<RowIndex>(*works[i].c, works[i].seed, works[i].plan.id_space);
        }
      }
      std::vector<RowRuns> chunk_runs(chunks.size());
      const auto decode_wall_start = std::chrono::steady_clock::now();
      ParallelFor(chunks.size(), threads, [&](size_t t) {
        const auto decode_start = std::chrono::steady_clock::now();
        const Chunk& ch = chunks[t];
        const Work& w = works[ch.work];
        chunk_runs[t] = DecodeRankRows(*w.c, w.plan, w.host, *index[ch.work], ch.rank,
                                       capture_rows(w, ch.work, ch.rank), ch.first, ch.last);
        clocks.decode += Since(decode_start);
      });
      clocks.decode_wall += Since(decode_wall_start);
      const auto finish_start = std::chrono::steady_clock::now();
      ParallelFor(works.size(), threads, [&](size_t i) {
        if (!slow[i]) return;
        const auto decode_start = std::chrono::steady_clock::now();
        const Work& w = works[i];
        std::vector<int64_t> checked_rows;
        for (const internal::RankBuffers& b : w.ranks) checked_rows.push_back(b.readback_rows);
        Decoded decoded;
        if (full) {
          std::vector<Readback> rows;
          for (size_t r = 0; r < w.ranks.size(); ++r) {
            rows.push_back({capture_rows(w, i, r).data, w.ranks[r].readback_rows});
          }
          const std::vector<RankSummary> host_summary = Summarize(*w.c, w.plan, w.seed, rows);
          for (size_t r = 0; r < w.ranks.size(); ++r) CheckSummary(summaries[i][r], host_summary[r], r);
          decoded = Decode(*w.c, w.plan, w.host, w.seed, rows);
        } else {
          decoded = DecodeSummaryOnly(*w.c, w.plan, w.seed, summaries[i], checked_rows);
          for (size_t t = chunks_from[i]; t < chunks_from[i + 1]; ++t) {
            RowRuns& runs = decoded.captured[chunks[t].rank];
            if (runs.empty()) {
              runs = std::move(chunk_runs[t]);
            } else {
              AppendRuns(runs, chunk_runs[t]);
            }
          }
          for (size_t r = 0; r < w.ranks.size(); ++r) {
            if (w.plan.ranks[r].capture) {
              AppendRun(decoded.captured[r], {RowRun::kPad, 0, capture_rows_of(i, r) - rows_of(i, r)});
            }
          }
        }
        out[i] = Finish(w, std::move(decoded));
        clocks.decode += Since(decode_start);
      });
      clocks.finish_wall += Since(finish_start);
    }
    for (size_t i = 0; i < works.size(); ++i) clocks.slow_cases += slow[i];
    clocks.cases += static_cast<int64_t>(works.size());
    clocks.observe += Since(start);
  }

  static int64_t Align(int64_t bytes) { return (bytes + 255) / 256 * 256; }

  // Slots of a case's row index: a power of two, at least twice its rows.
  static int64_t IndexSlots(const Case& c) {
    int64_t rows = 0;
    for (const int64_t p : c.step.padded) rows += p;
    int64_t slots = 16;
    while (slots < 2 * rows) slots *= 2;
    return slots;
  }

  static void CheckSummary(const RankSummary& device, const RankSummary& host, size_t rank) {
    if (device.wrong_values == host.wrong_values && device.first_index == host.first_index &&
        device.first_got == host.first_got && device.written_rows == host.written_rows) {
      return;
    }
    const auto text = [](const RankSummary& s) {
      return std::to_string(s.wrong_values) + " wrong, first at " +
             std::to_string(s.first_index) + " = " + std::to_string(s.first_got) + ", " +
             std::to_string(s.written_rows) + " rows written";
    };
    throw GpuError("gpu: rank " + std::to_string(rank) + ": the device judge's summary (" +
                   text(device) + ") differs from the host's (" + text(host) + ")");
  }

  static GpuError TooLarge() {
    return GpuError("case needs more GPU memory than the limit (--gpu memory_limit)");
  }

  void RunRange(std::vector<Work>& works, size_t first, size_t last,
                std::vector<sut::Observation>& out) {
    std::vector<Work> batch(std::make_move_iterator(works.begin() + static_cast<long>(first)),
                            std::make_move_iterator(works.begin() + static_cast<long>(last)));
    internal::BatchLaunch step(devices, pinned, collectives);
    const auto start = std::chrono::steady_clock::now();
    step.Load(batch);
    clocks.tables += Since(start);
    step.EnqueuePhases();
    step.EnqueueCounterDownload();
    step.Wait();
    clocks.step += Since(start);
    ObserveAll(step, batch, out.data() + first);
  }

  sut::Observation RunGraph(const Case& c) {
    std::vector<Work> one;
    one.push_back(internal::PrepareWork(c, options.sut, UseNccl(c),
                                        static_cast<int>(devices.size())));
    for (const int64_t bytes : one[0].bytes) {
      if (bytes > options.memory_limit) throw TooLarge();
    }
    internal::BatchLaunch step(devices, pinned, collectives);
    return internal::RunGraphReplays(step, one, devices, options.graph_replays,
                                     [&](const Work& w) {
                                       sut::Observation o;
                                       ObserveAll(step, {&w, 1}, &o);
                                       return o;
                                     });
  }

  std::vector<sut::Observation> RunBatch(std::span<const Case> cases) {
    std::vector<sut::Observation> out(cases.size());
    if (options.graph) {
      for (size_t i = 0; i < cases.size(); ++i) out[i] = RunGraph(cases[i]);
      return out;
    }
    std::vector<Work> works(cases.size());
    const auto prepare_start = std::chrono::steady_clock::now();
    ParallelFor(cases.size(), threads, [&](size_t i) {
      const auto start = std::chrono::steady_clock::now();
      works[i] = internal::PrepareWork(cases[i], options.sut, UseNccl(cases[i]),
                                       static_cast<int>(devices.size()));
      clocks.prepare += Since(start);
    });
    clocks.prepare_wall += Since(prepare_start);
    // Greedy batches under the memory limit, in case order.
    std::vector<int64_t> used(devices.size(), 0);
    size_t first = 0;
    for (size_t i = 0; i < works.size(); ++i) {
      bool fits = true;
      for (size_t d = 0; d < devices.size(); ++d) {
        if (works[i].bytes[d] > options.memory_limit) throw TooLarge();
        fits = fits && used[d] + works[i].bytes[d] <= options.memory_limit;
      }
      if (!fits) {
        RunRange(works, first, i, out);
        first = i;
        std::fill(used.begin(), used.end(), 0);
      }
      for (size_t d = 0; d < devices.size(); ++d) used[d] += works[i].bytes[d];
    }
    if (first < works.size()) RunRange(works, first, works.size(), out);
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

Runner::Runner(GpuOptions options)
    : Producer(options.sut), impl_(std::make_unique<Impl>(std::move(options))) {}
Runner::~Runner() = default;

std::vector<sut::Observation> Runner::Observe(std::span<const Case> cases) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<sut::Observation> out = impl_->RunBatch(cases);
  impl_->clocks.total += Impl::Since(start);
  return out;
}

std::string Runner::Label() const { return std::string(sut::SutName(options().version)); }
std::string Runner::Id() const { return Label(); }

int Runner::devices() const { return static_cast<int>(impl_->devices.size()); }
const GpuOptions& Runner::gpu_options() const { return impl_->options; }

RunnerTimings Runner::timings() const {
  const Impl::Clocks& c = impl_->clocks;
  RunnerTimings t;
  t.total_s = static_cast<double>(c.total) * 1e-9;
  t.prepare_s = static_cast<double>(c.prepare) * 1e-9;
  t.prepare_wall_s = static_cast<double>(c.prepare_wall) * 1e-9;
  t.tables_s = static_cast<double>(c.tables) * 1e-9;
  t.step_s = static_cast<double>(c.step) * 1e-9;
  t.observe_s = static_cast<double>(c.observe) * 1e-9;
  t.readback_s = static_cast<double>(c.readback) * 1e-9;
  t.decode_s = static_cast<double>(c.decode) * 1e-9;
  t.summaries_wall_s = static_cast<double>(c.summaries_wall) * 1e-9;
  t.pack_plan_s = static_cast<double>(c.pack_plan) * 1e-9;
  t.decode_wall_s = static_cast<double>(c.decode_wall) * 1e-9;
  t.finish_wall_s = static_cast<double>(c.finish_wall) * 1e-9;
  t.cases = c.cases;
  t.slow_cases = c.slow_cases;
  return t;
}

}  // namespace r3::gpu
