// The real CUDA capture path: one step of vLLM's routed-experts capture for
// every (dp, tp) rank of a case, with data that moves through GPU memory and
// NCCL collectives. On several GPUs ranks run one per GPU, or round-robin
// when they outnumber the GPUs (real NCCL communicators between GPUs, one
// process, non-blocking communicators); on one GPU they are emulated with
// device-to-device copies of the same sizes and order. The host SUT
// (r3::sut) decides each rank's capture branch and slice, exactly as on the
// CPU; the GPU moves the rows and counts the values that differ from the
// model's; a case with a wrong value is read back and decoded into an
// r3::sut::Observation. Every case is judged by r3::check::JudgeObservation.
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
#include "r3/check/run_case.h"
#include "r3/sut/observation.h"
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
};

// The first value that differs from what the model says the capturer buffer
// must hold (the fill of DP rank dp's rows at the capture layer, kUnwritten
// everywhere else).
struct Mismatch {
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t row = 0;
  int64_t layer = 0;
  int64_t k = 0;
  int64_t got = 0;
  int64_t expected = 0;
};

struct GpuCaseResult {
  check::CaseResult result;  // the GPU observation, judged like the host's
  sut::Observation host;     // the host SUT's observation of the same case
  uint64_t seed = 0;         // fill seed of the (last) step checked
  int64_t layer = 0;
  std::string mode;          // "emulated on 1 GPU" | "nccl on N GPUs" (+ ", graph")
  int64_t steps = 0;         // steps checked (graph replays)
  int64_t values_checked = 0;
  int64_t wrong_values = 0;
  std::optional<Mismatch> first_mismatch;

  // No unexplained violation, and no wrong value unless a known finding
  // explains the verdict's violations.
  bool Passes() const;
  // One line: mode, values checked, wrong values, first mismatch.
  std::string Summary() const;
};

// Hash of the case's text: the same case always gets the same routing.
uint64_t CaseSeed(const Case& c);

class Runner {
 public:
  explicit Runner(GpuOptions options);  // throws GpuError without a GPU
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Runs the cases in as few batches as fit the memory limit: each batch is
  // one step on the GPUs, judged there; only a case with a wrong value is
  // read back and decoded on the host.
  std::vector<GpuCaseResult> RunBatch(std::span<const Case> cases);
  GpuCaseResult Run(const Case& c);

  int devices() const;
  const GpuOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace r3::gpu

#endif  // R3_GPU_GPU_H_
