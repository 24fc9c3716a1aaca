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
      throw UsageError("--mutant " + name + ": lives in the GPU capture path, which only --gpu "
                       "runs; here it would change nothing");
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

#ifdef R3CHECK_HAVE_GPU

namespace {

// The runner, with its failures worded as the flag's.
class GpuProducer final : public sut::Producer {
 public:
  GpuProducer(const GpuFlags& flags, const sut::SutOptions& options) : Producer(options) {
    const gpu::Availability gpus = gpu::ProbeGpus();
    if (!gpus.ok()) throw UsageError("--gpu: no usable GPU here (" + gpus.detail + ")");
    gpu::GpuOptions opts;
    opts.sut = options;
    opts.mode = flags.ranks == "emulated" ? gpu::RankMode::kEmulated : gpu::RankMode::kAuto;
    opts.graph = flags.graph;
    try {
      runner_ = std::make_unique<gpu::Runner>(opts);
    } catch (const gpu::GpuError& e) {
      throw UsageError(std::string("--gpu: ") + e.what());
    }
    std::cerr << "r3check: --gpu on " << runner_->devices() << " GPU(s): " << gpus.detail << "\n";
  }

  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    try {
      return runner_->Observe(cases);
    } catch (const gpu::GpuError& e) {
      throw UsageError(std::string("--gpu: ") + e.what());
    }
  }
  std::string Label() const override { return runner_->Label(); }
  std::string Id() const override { return runner_->Id(); }

 private:
  std::unique_ptr<gpu::Runner> runner_;
};

}  // namespace

std::shared_ptr<sut::Producer> MakeGpuProducer(const GpuFlags& flags,
                                               const sut::SutOptions& options) {
  return std::make_shared<GpuProducer>(flags, options);
}

#else

std::shared_ptr<sut::Producer> MakeGpuProducer(const GpuFlags&, const sut::SutOptions&) {
  throw UsageError("--gpu: this r3check was built without CUDA (configure with -Dgpu=enabled)");
}

#endif

}  // namespace r3::cli
