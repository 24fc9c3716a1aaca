// The real CUDA capture path: one step of vLLM's routed-experts capture for
// every (dp, tp) rank of a case, with data that moves through GPU memory and
// NCCL collectives. On several GPUs ranks run one per GPU, or round-robin
// when they outnumber the GPUs (real NCCL communicators between GPUs, one
// process, non-blocking communicators); on one GPU they are emulated with
// device-to-device copies of the same sizes and order. The host SUT
// (r3::sut) decides each rank's capture branch and slice, exactly as on the
// CPU; the GPU moves the rows and counts the values that differ from the
// model's; a case with a wrong value is read back and decoded into an
// r3::sut::Observation, with what the device checked in its `device`. The
// Runner is a sut::Producer: the check layer judges its observations like
// any other's (this layer knows nothing of the judge).
//
// This header names no CUDA type, so front ends compile without nvcc.
#ifndef R3_GPU_GPU_H_
#define R3_GPU_GPU_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "r3/case/case.h"
#include "r3/sut/observation.h"
#include "r3/sut/producer.h"
#include "r3/sut/sut.h"

namespace r3::gpu {

// A CUDA or NCCL failure, no usable GPU, or a case too large for the device.
class GpuError : public std::runtime_error {
 public:
  explicit GpuError(const std::string& what) : std::runtime_error(what) {}
};

struct Availability {
  int devices = 0;
  std::string detail;  // why there is none, or the devices' names
  bool ok() const { return devices > 0; }
};

// Never throws: a machine without driver or GPU gives devices == 0.
Availability ProbeGpus();

enum class RankMode {
  kAuto,      // with 2+ GPUs: ranks on GPUs round-robin, NCCL between GPUs
  kEmulated,  // every rank on GPU 0, collectives as device-to-device copies
};

struct GpuOptions {
  sut::SutOptions sut;
  RankMode mode = RankMode::kAuto;
  int max_gpus = 0;          // 0: every visible GPU
  bool graph = false;        // capture the step as a CUDA graph and replay it
  int graph_replays = 3;     // replays per graph, each with its own fill seed
  int64_t memory_limit = int64_t{16} << 30;  // bytes per device for one batch
  // A step (collectives included) that has not finished after this long is
  // a hang: the communicators are aborted and the batch throws GpuError.
  int64_t timeout_ms = 60'000;
  int host_threads = 0;      // host SUT, plans and verdicts; 0: one per core
  // Read every checked value of a failing case back and judge it again on
  // the host: a GpuError when the device's summary differs (tests and the
  // benchmark check the device judge with it; slower on failing cases).
  bool full_readback = false;
  // Device memory per GPU and batch for the failing cases' row indexes
  // (which row of the step a misplaced captured row is); a case past it is
  // looked up on the host instead (same answer, slower).
  int64_t row_index_bytes = int64_t{1} << 30;
};

using sut::Mismatch;

// Where a runner's time went, summed over every Observe (seconds; the
// phases on host threads are summed over the threads). For the benchmark.
struct RunnerTimings {
  double total_s = 0;     // whole Observe calls (wall); the rest of a check is the judge
  double prepare_s = 0;   // host SUT, plan, placement (threads)
  double prepare_wall_s = 0;  // the same, wall
  double tables_s = 0;    // of the step: buffers placed, task tables built and sent
  double step_s = 0;      // tables, upload, the phases on the GPUs, counters back
  double observe_s = 0;   // observations assembled (threads), the slow path included
  double readback_s = 0;  // of which: capturer buffers copied back (slow path, wall)
  double decode_s = 0;    // of which: host decode of those buffers (slow path, threads)
  double summaries_wall_s = 0;  // of observe: the judge's summaries read, fast cases done (wall)
  double pack_plan_s = 0;       // of observe: the slow cases' pack and index tasks laid out (wall)
  double decode_wall_s = 0;     // of observe: the row chunks decoded (wall)
  double finish_wall_s = 0;     // of observe: the slow cases' observations assembled (wall)
  int64_t cases = 0;
  int64_t slow_cases = 0;  // cases read back and decoded on the host
};

// Hash of the case's text: the same case always gets the same routing.
uint64_t CaseSeed(const Case& c);

class Runner final : public sut::Producer {
 public:
  explicit Runner(GpuOptions options);  // throws GpuError without a GPU
  ~Runner() override;
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs the cases in as few batches as fit the memory limit: each batch is
  // one step on the GPUs, checked there; only a case with a wrong value is
  // read back and decoded on the host. Throws GpuError.
  std::vector<sut::Observation> Observe(std::span<const Case> cases) override;
  // The built-in SUT's name: the GPU runs its capture (the device line says
  // where).
  std::string Label() const override;
  std::string Id() const override;

  int devices() const;
  const GpuOptions& gpu_options() const;
  RunnerTimings timings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace r3::gpu

#endif  // R3_GPU_GPU_H_
