// --gpu for every command that judges cases (check, explain, verify,
// minimize, sizing): the cases run through the real CUDA capture path
// (src/r3/gpu) instead of the host SUT. Built without CUDA, or run where
// there is no GPU, --gpu is a usage error (exit 2): it never falls back to
// the host silently.
#ifndef R3_CLI_GPU_FLAGS_H_
#define R3_CLI_GPU_FLAGS_H_

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "r3/sut/producer.h"
#include "r3/sut/sut.h"

namespace r3::cli {

struct SutFlags;

struct GpuFlags {
  bool gpu = false;
  std::string ranks = "auto";  // auto | emulated
  bool graph = false;

  void AddTo(CLI::App& app);
};

// The GPU runner as the command's producer; its failures (CUDA, NCCL, a case
// too large for the device) are UsageErrors naming --gpu. Throws UsageError
// when there is no CUDA build or no GPU.
std::shared_ptr<sut::Producer> MakeGpuProducer(const GpuFlags& flags,
                                               const sut::SutOptions& options);

// A gpu-* mutant lives in the GPU data movement: off the GPU path (no --gpu)
// it would change nothing, so it is a UsageError.
void RejectGpuOnlyMutants(bool gpu_path, const SutFlags& flags);

// --gpu runs the built-in SUT's capture on the GPU; an engine SUT runs its own
// code, on GPUs through --engine-launch torchrun. Throws UsageError for both,
// and RejectGpuOnlyMutants's.
void RejectGpuWithEngine(const GpuFlags& gpu, const SutFlags& flags);

}  // namespace r3::cli

#endif  // R3_CLI_GPU_FLAGS_H_
