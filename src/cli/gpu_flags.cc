#include "cli/gpu_flags.h"

#include <iostream>

#include "cli/sut_flags.h"
#include "r3/sut/mutants.h"

#ifdef R3CHECK_HAVE_GPU
#include "r3/gpu/gpu.h"
#endif

namespace r3::cli {

void GpuFlags::AddTo(CLI::App& app) {
  CLI::Option* on = app.add_flag("--gpu", gpu, "run the cases through the CUDA capture path on the GPU(s)");
  // Without --gpu these would silently check on the host.
  app.add_option("--gpu-ranks", ranks,
                 "auto: ranks on the GPUs (NCCL between them); emulated: all on one GPU")
      ->check(CLI::IsMember({"auto", "emulated"}))
      ->needs(on);
  app.add_flag("--gpu-graph", graph, "capture each step as a CUDA graph and check 3 replays")
      ->needs(on);
}

void RejectGpuOnlyMutants(bool gpu_path, const SutFlags& flags) {
  if (gpu_path) return;
  for (const std::string& name : flags.mutants) {
    const auto m = sut::FindMutant(name);
    if (m && sut::GetMutantInfo(*m).gpu_only) {
      throw UsageError("--mutant " + name + ": lives in the GPU capture path, which only check "
                       "--gpu and verify --gpu run; here it would change nothing");
    }
  }
}

void RejectGpuWithEngine(const GpuFlags& gpu, const SutFlags& flags) {
  RejectGpuOnlyMutants(gpu.gpu, flags);
  if (gpu.gpu && flags.IsEngine()) {
    throw UsageError("--gpu: runs the built-in SUT's capture on the GPU; to run an engine's own "
                     "code on GPUs use --engine-launch torchrun --engine-device cuda");
  }
}

std::vector<check::CaseResult> JudgeCases(GpuChecker* gpu, std::span<const Case> cases,
                                          const sut::SutOptions& options,
                                          std::vector<std::string>* gpu_lines) {
  gpu_lines->assign(cases.size(), "");
  if (gpu == nullptr) return check::RunCases(cases, options);
  return gpu->CheckBatch(cases, gpu_lines);
}

#ifdef R3CHECK_HAVE_GPU

struct GpuChecker::Impl {
  std::unique_ptr<gpu::Runner> runner;
};

GpuChecker::GpuChecker(const GpuFlags& flags, const sut::SutOptions& options)
    : impl_(std::make_unique<Impl>()) {
  const gpu::Availability gpus = gpu::ProbeGpus();
  if (!gpus.ok()) throw UsageError("--gpu: no usable GPU here (" + gpus.detail + ")");
  gpu::GpuOptions opts;
  opts.sut = options;
  opts.mode = flags.ranks == "emulated" ? gpu::RankMode::kEmulated : gpu::RankMode::kAuto;
  opts.graph = flags.graph;
  try {
    impl_->runner = std::make_unique<gpu::Runner>(opts);
  } catch (const gpu::GpuError& e) {
    throw UsageError(std::string("--gpu: ") + e.what());
  }
  std::cerr << "r3check: --gpu on " << impl_->runner->devices() << " GPU(s): " << gpus.detail
            << "\n";
}

GpuChecker::~GpuChecker() = default;

std::vector<check::CaseResult> GpuChecker::CheckBatch(std::span<const Case> cases,
                                                      std::vector<std::string>* summaries) {
  try {
    std::vector<check::CaseResult> results;
    summaries->clear();
    for (gpu::GpuCaseResult& r : impl_->runner->RunBatch(cases)) {
      summaries->push_back(r.Summary());
      results.push_back(std::move(r.result));
    }
    return results;
  } catch (const gpu::GpuError& e) {
    throw UsageError(std::string("--gpu: ") + e.what());
  }
}

#else

struct GpuChecker::Impl {};

GpuChecker::GpuChecker(const GpuFlags&, const sut::SutOptions&) {
  throw UsageError("--gpu: this r3check was built without CUDA (configure with -Dgpu=enabled)");
}

GpuChecker::~GpuChecker() = default;

std::vector<check::CaseResult> GpuChecker::CheckBatch(std::span<const Case>,
                                                      std::vector<std::string>*) {
  return {};
}

#endif

}  // namespace r3::cli
