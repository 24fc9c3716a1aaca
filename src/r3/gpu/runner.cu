// The batch runner: host work (host SUT, plans, verdicts) on a thread pool,
// one BatchLaunch per batch on the GPUs, judged there.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "r3/case/parallel_for.h"
#include "r3/gpu/arena.h"
#include "r3/gpu/batch_launch.h"
#include "r3/gpu/collectives.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/graph_runner.h"

namespace r3::gpu {

using internal::Work;

struct Runner::Impl {
  GpuOptions options;
  std::vector<internal::DeviceArena> devices;
  internal::PinnedArena pinned;
  internal::PinnedArena readback;  // slow cases' capturer rows
  // Declared after the arenas: communicators go before the streams.
  internal::Collectives collectives;
  unsigned threads = 1;
  // Nanoseconds per phase (RunnerTimings); atomics: threads add to them.
  struct Clocks {
    std::atomic<int64_t> prepare{0}, tables{0}, step{0}, observe{0}, readback{0}, decode{0};
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
                                       : std::max(1u, std::thread::hardware_concurrency());
  }

  // Ranks go to GPUs with NCCL whenever there are two GPUs and two ranks.
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

  // The works' observations, in order. A case whose device judge found no
  // wrong value, and whose host SUT claims the model's rows, is known without
  // a read back. The others' capturer rows come back together: one async
  // copy per rank into pinned memory, one wait per GPU, then a decode on the
  // thread pool (a copy per rank and thread, each waited for alone, cost a
  // hundred times more).
  void ObserveAll(const internal::BatchLaunch& step, std::span<const Work> works,
                  sut::Observation* out) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<int64_t> wrong(works.size(), 0);
    std::vector<uint8_t> slow(works.size(), 0);
    ParallelFor(works.size(), threads, [&](size_t i) {
      const Work& w = works[i];
      std::vector<int64_t> rows;
      for (size_t r = 0; r < w.ranks.size(); ++r) {
        rows.push_back(w.ranks[r].readback_rows);
        wrong[i] += step.WrongValues(w, r);
      }
      std::optional<std::vector<RowRuns>> captured;
      if (wrong[i] == 0) captured = CapturedWhenAllRight(*w.c, w.plan, w.host, rows);
      if (!captured) {
        slow[i] = 1;
        return;
      }
      Decoded decoded;
      decoded.captured = std::move(*captured);
      decoded.values_checked = ValuesChecked(w.plan, rows);
      out[i] = Finish(w, std::move(decoded));
    });
    std::vector<int64_t> offset(works.size(), 0);
    int64_t total = 0;
    for (size_t i = 0; i < works.size(); ++i) {
      if (!slow[i]) continue;
      offset[i] = total;
      const Work& w = works[i];
      for (const internal::RankBuffers& b : w.ranks) {
        total += b.readback_rows * w.plan.num_layers * w.plan.top_k * int64_t{sizeof(int32_t)};
      }
    }
    if (total > 0) {
      const auto read_start = std::chrono::steady_clock::now();
      char* host = readback.Get(total);
      for (size_t i = 0; i < works.size(); ++i) {
        if (!slow[i]) continue;
        char* at = host + offset[i];
        const Work& w = works[i];
        for (const internal::RankBuffers& b : w.ranks) {
          const int64_t bytes =
              b.readback_rows * w.plan.num_layers * w.plan.top_k * int64_t{sizeof(int32_t)};
          if (bytes > 0) {
            const internal::DeviceArena& gpu = devices[static_cast<size_t>(b.device)];
            R3_CUDA(cudaSetDevice(gpu.device()));
            R3_CUDA(cudaMemcpyAsync(at, b.capturer, static_cast<size_t>(bytes),
                                    cudaMemcpyDeviceToHost, gpu.stream()));
          }
          at += bytes;
        }
      }
      for (const internal::DeviceArena& gpu : devices) {
        R3_CUDA(cudaSetDevice(gpu.device()));
        R3_CUDA(cudaStreamSynchronize(gpu.stream()));
      }
      clocks.readback += Since(read_start);
      ParallelFor(works.size(), threads, [&](size_t i) {
        if (!slow[i]) return;
        const auto decode_start = std::chrono::steady_clock::now();
        const Work& w = works[i];
        std::vector<Readback> rows;
        const char* at = host + offset[i];
        for (const internal::RankBuffers& b : w.ranks) {
          rows.push_back({reinterpret_cast<const int32_t*>(at), b.readback_rows});
          at += b.readback_rows * w.plan.num_layers * w.plan.top_k * int64_t{sizeof(int32_t)};
        }
        Decoded decoded = Decode(*w.c, w.plan, w.host, w.seed, rows);
        if (decoded.wrong_values != wrong[i]) {
          throw GpuError("gpu: the device judge counted " + std::to_string(wrong[i]) +
                         " wrong values, the host decode " +
                         std::to_string(decoded.wrong_values));
        }
        out[i] = Finish(w, std::move(decoded));
        clocks.decode += Since(decode_start);
      });
    }
    for (size_t i = 0; i < works.size(); ++i) clocks.slow_cases += slow[i];
    clocks.cases += static_cast<int64_t>(works.size());
    clocks.observe += Since(start);
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
    one.push_back(internal::PrepareWork(c, options.sut, /*nccl=*/false,
                                        static_cast<int>(devices.size())));
    if (one[0].bytes[0] > options.memory_limit) throw TooLarge();
    internal::BatchLaunch step(devices, pinned, collectives);
    return internal::RunGraphReplays(step, one, devices[0], options.graph_replays,
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
    ParallelFor(cases.size(), threads, [&](size_t i) {
      const auto start = std::chrono::steady_clock::now();
      works[i] = internal::PrepareWork(cases[i], options.sut, UseNccl(cases[i]),
                                       static_cast<int>(devices.size()));
      clocks.prepare += Since(start);
    });
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
  return impl_->RunBatch(cases);
}

std::string Runner::Label() const { return std::string(sut::SutName(options().version)); }
std::string Runner::Id() const { return Label(); }

int Runner::devices() const { return static_cast<int>(impl_->devices.size()); }
const GpuOptions& Runner::gpu_options() const { return impl_->options; }

RunnerTimings Runner::timings() const {
  const Impl::Clocks& c = impl_->clocks;
  RunnerTimings t;
  t.prepare_s = static_cast<double>(c.prepare) * 1e-9;
  t.tables_s = static_cast<double>(c.tables) * 1e-9;
  t.step_s = static_cast<double>(c.step) * 1e-9;
  t.observe_s = static_cast<double>(c.observe) * 1e-9;
  t.readback_s = static_cast<double>(c.readback) * 1e-9;
  t.decode_s = static_cast<double>(c.decode) * 1e-9;
  t.cases = c.cases;
  t.slow_cases = c.slow_cases;
  return t;
}

}  // namespace r3::gpu
