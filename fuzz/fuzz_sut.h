// Which system under test the layout target checks: vllm-post-50874 by
// default; R3_FUZZ_SUT / R3_FUZZ_MUTANT (comma-separated) / R3_FUZZ_POLICY
// in the environment, or --sut= / --mutant= / --policy= on the command line
// (libFuzzer ignores flags that start with "--" and passes them on to the
// processes of -fork and -jobs). The command line wins. R3_FUZZ_PRODUCER /
// --producer= picks who observes each case: host (the default) or gpu (the
// CUDA capture path, emulated ranks on GPU 0; a GCC build with CUDA only).
#ifndef R3_FUZZ_FUZZ_SUT_H_
#define R3_FUZZ_FUZZ_SUT_H_

#include <memory>
#include <string>

#include "r3/sut/producer.h"
#include "r3/sut/sut.h"

namespace r3::fuzz {

// Reads the environment and argv; on a bad name prints one line naming the
// variable or flag and exits with status 2.
sut::SutOptions SutOptionsFromEnvAndArgs(int argc, char** argv);

// The producer of those options. --producer=gpu without a GPU prints one
// line and exits with status 77 (skip); built without CUDA, status 2.
std::shared_ptr<sut::Producer> ProducerFromEnvAndArgs(int argc, char** argv);

}  // namespace r3::fuzz

#endif  // R3_FUZZ_FUZZ_SUT_H_
