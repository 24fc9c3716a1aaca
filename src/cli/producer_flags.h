// The one place that turns a command line into a sut::Producer: the host
// SUT, an engine adapter (--sut vllm:PATH | exec:CMD), or the CUDA capture
// path (--gpu). Every command that judges cases gets its observations here.
#ifndef R3_CLI_PRODUCER_FLAGS_H_
#define R3_CLI_PRODUCER_FLAGS_H_

#include <memory>

#include "cli/gpu_flags.h"
#include "cli/sut_flags.h"
#include "r3/sut/producer.h"

namespace r3::cli {

// Throws UsageError naming the flag (and sut::ExternalSutError when an
// engine fails to come up). A gpu-* mutant needs --gpu; --gpu takes the
// built-in SUT, not an engine.
std::shared_ptr<sut::Producer> MakeProducer(const SutFlags& flags, const GpuFlags& gpu);

}  // namespace r3::cli

#endif  // R3_CLI_PRODUCER_FLAGS_H_
