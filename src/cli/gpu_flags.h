// --gpu for `r3check check` and `r3check verify`: run each case through the
// real CUDA capture path (src/r3/gpu) instead of the host SUT. Built without
// CUDA, or run where there is no GPU, --gpu is a usage error (exit 2): it
// never falls back to the host silently.
#ifndef R3_CLI_GPU_FLAGS_H_
#define R3_CLI_GPU_FLAGS_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "r3/case/case.h"
#include "r3/check/run_case.h"
#include "r3/sut/sut.h"

namespace r3::cli {

struct SutFlags;

struct GpuFlags {
  bool gpu = false;
  std::string ranks = "auto";  // auto | emulated
  bool graph = false;

  void AddTo(CLI::App& app);
};

// One GPU runner for the whole command.
class GpuChecker {
 public:
  // Throws UsageError when there is no CUDA build or no GPU.
  GpuChecker(const GpuFlags& flags, const sut::SutOptions& options);
  ~GpuChecker();

  // The judged GPU observations of the cases, run as batches on the GPU(s);
  // `summaries` gets the GPU's one-line account of each case.
  std::vector<check::CaseResult> CheckBatch(std::span<const Case> cases,
                                            std::vector<std::string>* summaries);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A gpu-* mutant lives in the GPU data movement: off the GPU path (no --gpu,
// or a command without it) it would change nothing, so it is a UsageError.
void RejectGpuOnlyMutants(bool gpu_path, const SutFlags& flags);

// --gpu runs the built-in SUT's capture on the GPU; an engine SUT runs its own
// code, on GPUs through --engine-launch torchrun. Throws UsageError for both,
// and RejectGpuOnlyMutants's.
void RejectGpuWithEngine(const GpuFlags& gpu, const SutFlags& flags);

// Judges every case: on the GPU path when `gpu` is set (its one-line account
// of each case in `gpu_lines`), else through the SUT, which sees the cases as
// one batch (an engine SUT: one request per batch, not one per case).
std::vector<check::CaseResult> JudgeCases(GpuChecker* gpu, std::span<const Case> cases,
                                          const sut::SutOptions& options,
                                          std::vector<std::string>* gpu_lines);

}  // namespace r3::cli

#endif  // R3_CLI_GPU_FLAGS_H_
