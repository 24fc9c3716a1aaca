// The batch runner: host work (host SUT, plans, verdicts) on a thread pool,
// one BatchLaunch per batch on the GPUs, judged there.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "r3/gpu/arena.h"
#include "r3/gpu/collectives.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/graph_runner.h"
#include "r3/gpu/internal/parallel_for.h"
#include "r3/gpu/batch_launch.h"

namespace r3::gpu {

using internal::Work;

struct Runner::Impl {
  GpuOptions options;
  std::vector<internal::DeviceArena> devices;
  internal::PinnedArena pinned;
  // Declared after the arenas: communicators go before the streams.
  internal::Collectives collectives;
  unsigned threads = 1;

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

  // The device's verdict, decoded on the host only when something is wrong.
  GpuCaseResult Judge(const internal::BatchLaunch& step, const Work& w) const {
    std::vector<int64_t> rows;
    std::vector<int> device_of;
    int64_t wrong = 0;
    for (size_t i = 0; i < w.ranks.size(); ++i) {
      rows.push_back(w.ranks[i].readback_rows);
      device_of.push_back(w.ranks[i].device);
      wrong += step.WrongValues(w, i);
    }
    Decoded decoded;
    std::optional<std::vector<RowRuns>> captured;
    if (wrong == 0) captured = CapturedWhenAllRight(*w.c, w.plan, w.host, rows);
    if (captured) {
      decoded.captured = std::move(*captured);
      decoded.values_checked = ValuesChecked(w.plan, rows);
    } else {
      std::vector<std::vector<int32_t>> data;
      std::vector<Readback> readback;
      for (size_t i = 0; i < w.ranks.size(); ++i) data.push_back(step.ReadCapturer(w, i));
      for (size_t i = 0; i < w.ranks.size(); ++i) readback.push_back({data[i].data(), rows[i]});
      decoded = Decode(*w.c, w.plan, w.host, w.seed, readback);
      if (decoded.wrong_values != wrong) {
        throw GpuError("gpu: the device judge counted " + std::to_string(wrong) +
                       " wrong values, the host decode " +
                       std::to_string(decoded.wrong_values));
      }
    }
    GpuCaseResult out = AssembleResult(*w.c, w.plan, w.host, std::move(decoded), device_of);
    out.seed = w.seed;
    out.mode = ModeName(w);
    return out;
  }

  static GpuError TooLarge() {
    return GpuError("case needs more GPU memory than the limit (--gpu memory_limit)");
  }

  void RunRange(std::vector<Work>& works, size_t first, size_t last,
                std::vector<GpuCaseResult>& out) {
    std::vector<Work> batch(std::make_move_iterator(works.begin() + static_cast<long>(first)),
                            std::make_move_iterator(works.begin() + static_cast<long>(last)));
    internal::BatchLaunch step(devices, pinned, collectives);
    step.Run(batch);
    internal::ParallelFor(batch.size(), threads,
                          [&](size_t i) { out[first + i] = Judge(step, batch[i]); });
  }

  GpuCaseResult RunGraph(const Case& c) {
    std::vector<Work> one;
    one.push_back(internal::PrepareWork(c, options.sut, /*nccl=*/false,
                                        static_cast<int>(devices.size())));
    if (one[0].bytes[0] > options.memory_limit) throw TooLarge();
    internal::BatchLaunch step(devices, pinned, collectives);
    return internal::RunGraphReplays(step, one, devices[0], options.graph_replays,
                                     [&](const Work& w) { return Judge(step, w); });
  }

  std::vector<GpuCaseResult> RunBatch(std::span<const Case> cases) {
    std::vector<GpuCaseResult> out(cases.size());
    if (options.graph) {
      for (size_t i = 0; i < cases.size(); ++i) out[i] = RunGraph(cases[i]);
      return out;
    }
    std::vector<Work> works(cases.size());
    internal::ParallelFor(cases.size(), threads, [&](size_t i) {
      works[i] = internal::PrepareWork(cases[i], options.sut, UseNccl(cases[i]),
                                       static_cast<int>(devices.size()));
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

Runner::Runner(GpuOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Runner::~Runner() = default;

std::vector<GpuCaseResult> Runner::RunBatch(std::span<const Case> cases) {
  return impl_->RunBatch(cases);
}

GpuCaseResult Runner::Run(const Case& c) { return std::move(impl_->RunBatch({&c, 1})[0]); }

int Runner::devices() const { return static_cast<int>(impl_->devices.size()); }
const GpuOptions& Runner::options() const { return impl_->options; }

}  // namespace r3::gpu
