#include "cli/producer_flags.h"

#include <string>

#include "r3/engine/engine_sut.h"
#include "r3/sut/mutants.h"

namespace r3::cli {
namespace {

// An engine that loaded its own sizing code is judged on the buffer that
// code allocated: a built-in policy or sizing mutant would change nothing.
void RejectBuiltInSizing(const SutFlags& flags, const sut::Producer& engine) {
  const std::string label = engine.SizingLabel();
  if (label.empty()) return;
  if (flags.policy != SutFlags{}.policy) {
    throw UsageError("--policy " + flags.policy + ": the engine loaded its own sizing code (" +
                     label + "), which invariant 1 judges; a built-in policy would change nothing");
  }
  for (const std::string& name : flags.mutants) {
    if (sut::GetMutantInfo(*sut::FindMutant(name)).sizing) {
      throw UsageError("--mutant " + name + ": lives in the built-in sizing policy; the engine "
                       "loaded its own sizing code (" + label +
                       "), which invariant 1 judges, so it would change nothing");
    }
  }
}

}  // namespace

std::shared_ptr<sut::Producer> MakeProducer(const SutFlags& flags, const GpuFlags& gpu) {
  RejectGpuWithEngine(gpu, flags);
  engine::EngineSpec spec;
  const sut::SutOptions options = flags.Options(&spec);
  if (flags.IsEngine()) {
    std::shared_ptr<sut::Producer> engine = engine::StartEngine(spec, options);
    RejectBuiltInSizing(flags, *engine);
    return engine;
  }
  if (gpu.gpu) return MakeGpuProducer(gpu, options);
  return sut::MakeHostProducer(options);
}

}  // namespace r3::cli
