#include "fuzz/fuzz_sut.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#ifdef R3CHECK_HAVE_GPU
#include "r3/gpu/gpu.h"
#endif

namespace r3::fuzz {
namespace {

[[noreturn]] void Die(std::string_view what, std::string_view value) {
  std::fprintf(stderr, "r3 fuzz: %.*s: unknown name '%.*s' (see `r3check mutants`)\n",
               static_cast<int>(what.size()), what.data(), static_cast<int>(value.size()),
               value.data());
  std::exit(2);
}

void SetSut(sut::SutOptions& options, std::string_view what, std::string_view name) {
  const auto version = sut::FindSut(name);
  if (!version) Die(what, name);
  options.version = *version;
}

void SetPolicy(sut::SutOptions& options, std::string_view what, std::string_view name) {
  const auto policy = sut::FindPolicy(name);
  if (!policy) Die(what, name);
  options.policy = *policy;
}

// A comma-separated list; empty items are ignored.
void SetMutants(sut::SutOptions& options, std::string_view what, std::string_view names) {
  if (const std::optional<std::string> bad = sut::SetMutantsByName(options, names)) Die(what, *bad);
}

}  // namespace

sut::SutOptions SutOptionsFromEnvAndArgs(int argc, char** argv) {
  sut::SutOptions options;
  if (const char* v = std::getenv("R3_FUZZ_SUT"); v != nullptr && *v != '\0') {
    SetSut(options, "R3_FUZZ_SUT", v);
  }
  if (const char* v = std::getenv("R3_FUZZ_POLICY"); v != nullptr && *v != '\0') {
    SetPolicy(options, "R3_FUZZ_POLICY", v);
  }
  if (const char* v = std::getenv("R3_FUZZ_MUTANT"); v != nullptr) {
    SetMutants(options, "R3_FUZZ_MUTANT", v);
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--sut=", 0) == 0) SetSut(options, "--sut", arg.substr(6));
    if (arg.rfind("--policy=", 0) == 0) SetPolicy(options, "--policy", arg.substr(9));
    if (arg.rfind("--mutant=", 0) == 0) SetMutants(options, "--mutant", arg.substr(9));
  }
  return options;
}

std::shared_ptr<sut::Producer> ProducerFromEnvAndArgs(int argc, char** argv) {
  const sut::SutOptions options = SutOptionsFromEnvAndArgs(argc, argv);
  std::string_view producer = "host";
  std::string_view what = "R3_FUZZ_PRODUCER";
  if (const char* v = std::getenv("R3_FUZZ_PRODUCER"); v != nullptr && *v != '\0') producer = v;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--producer=", 0) == 0) {
      producer = arg.substr(11);
      what = "--producer";
    }
  }
  if (producer == "host") return sut::MakeHostProducer(options);
  if (producer != "gpu") {
    std::fprintf(stderr, "r3 fuzz: %.*s: unknown producer '%.*s' (host | gpu)\n",
                 static_cast<int>(what.size()), what.data(), static_cast<int>(producer.size()),
                 producer.data());
    std::exit(2);
  }
#ifdef R3CHECK_HAVE_GPU
  const gpu::Availability gpus = gpu::ProbeGpus();
  if (!gpus.ok()) {
    std::fprintf(stderr, "r3 fuzz: %.*s=gpu: no usable GPU here (%s)\n",
                 static_cast<int>(what.size()), what.data(), gpus.detail.c_str());
    std::exit(77);
  }
  gpu::GpuOptions gpu_options;
  gpu_options.sut = options;
  gpu_options.mode = gpu::RankMode::kEmulated;
  return std::make_shared<gpu::Runner>(gpu_options);
#else
  std::fprintf(stderr, "r3 fuzz: %.*s=gpu: this build has no CUDA capture path\n",
               static_cast<int>(what.size()), what.data());
  std::exit(2);
#endif
}

}  // namespace r3::fuzz
