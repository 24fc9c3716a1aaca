#include "cli/sut_flags.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "cli/data_dirs.h"
#include "r3/engine/engine_sut.h"

namespace r3::cli {

namespace {

// Plain decimal seconds: digits, an optional fraction and exponent. CLI11
// reads with strtod, which also takes "nan" (CLI::Range lets it through:
// every comparison with it is false), "inf" and hex floats ("0x1p3" is 8).
bool PlainDecimal(const std::string& text) {
  size_t i = 0;
  size_t digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const size_t exponent = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == exponent) return false;
  }
  return i == text.size();
}

CLI::Validator FiniteSeconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return PlainDecimal(text)
                   ? ""
                   : "must be a decimal number of seconds in [0.001, 86400], not '" + text + "'";
      },
      "");
}

}  // namespace

void SutFlags::AddTo(CLI::App& app) {
  app.add_option("--sut", sut,
                 "system under test: vllm-post-50874 (default) | vllm-pre-50874 | vllm:PATH | sglang:PATH | vllm-ascend:PATH "
                 "(vLLM's own capture from a checkout, a routed_experts_capturer.py, or "
                 "'installed') | exec:CMD (an adapter speaking docs/engines.md)");
  // One value per flag: `--mutant A CASE` must not swallow CASE as a mutant.
  app.add_option("--mutant", mutants, "switch on a seeded bug (repeatable; see `r3check mutants`)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--policy", policy, "replay sizing policy: legacy | pr50874 (default) | tight");
  app.add_option("--engine-python", engine_python,
                 "Python for vllm:PATH (default: $R3_PYTHON, else /usr/bin/python3)");
  app.add_option("--engine-launch", engine_launch,
                 "none (one adapter process, default) | torchrun (one process per GPU rank)");
  app.add_option("--nproc", nproc, "torchrun --nproc-per-node for --engine-launch torchrun")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}));
  app.add_option("--engine-launch-arg", engine_launch_args,
                 "extra torchrun argument, e.g. --engine-launch-arg=--nnodes=2 (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--engine-device", engine_device, "cpu (default) | cuda: where the adapter's "
                                                   "tensors live");
  app.add_option("--engine-timeout", engine_timeout_s,
                 "seconds the adapter may take per request before it counts as hung (default " +
                     std::to_string(static_cast<int>(kDefaultEngineTimeoutS)) + ")")
      ->check(FiniteSeconds())
      ->check(CLI::Range(0.001, 86400.0));
  app.add_option("--engine-sizing", engine_sizing,
                 "the file holding vLLM's replay-buffer sizing code (modular_kernel.py or the "
                 "RoutedExpertsSink file) for a single-file vllm:PATH")
      ->type_name("FILE")
      ->check([](const std::string& v) { return v.empty() ? std::string("the path is empty") : ""; });
  app.add_option("--engine-base", engine_base,
                 "the vLLM capturer (a checkout, its routed_experts_capturer.py, or 'installed') "
                 "that a vllm-ascend:PATH patch is applied over")
      ->type_name("PATH")
      ->check([](const std::string& v) { return v.empty() ? std::string("the path is empty") : ""; });
}

bool SutFlags::IsEngine() const { return engine::IsEngineSut(sut); }

engine::LaunchOptions SutFlags::Launch() const {
  engine::LaunchOptions launch;
  launch.python = engine_python;
  launch.launch = engine_launch;
  launch.nproc = nproc;
  launch.launch_args = engine_launch_args;
  launch.device = engine_device;
  launch.adapters_dir = DefaultEnginesDir();
  launch.timeout_ms = static_cast<int64_t>(engine_timeout_s * 1000);
  launch.sizing = engine_sizing;
  launch.base = engine_base;
  launch.fork_server = fork_server;
  return launch;
}

sut::SutOptions SutFlags::Options(engine::EngineSpec* engine) const {
  sut::SutOptions options;
  const auto p = sut::FindPolicy(policy);
  if (!p) throw UsageError("--policy: unknown policy '" + policy + "'");
  options.policy = *p;
  for (const std::string& name : mutants) {
    const auto m = sut::FindMutant(name);
    if (!m) throw UsageError("--mutant: unknown mutant '" + name + "' (see `r3check mutants`)");
    if (IsEngine() && sut::GetMutantInfo(*m).host_capture) {
      throw UsageError("--mutant " + name + ": lives in the built-in SUT's capture code; with --sut " +
                       sut + " only dispatch and sizing mutants apply (see `r3check mutants`)");
    }
    options.mutants.set(*m);
  }
  const bool engine_flags = !engine_python.empty() || engine_launch != "none" || nproc != 1 ||
                            !engine_launch_args.empty() || engine_device != "cpu" ||
                            engine_timeout_s != kDefaultEngineTimeoutS || !engine_sizing.empty() ||
                            !engine_base.empty();
  if (!IsEngine()) {
    const auto version = sut::FindSut(sut);
    if (!version) {
      throw UsageError("--sut: unknown system under test '" + sut +
                       "' (vllm-post-50874 | vllm-pre-50874 | vllm:PATH | sglang:PATH | vllm-ascend:PATH | exec:CMD)");
    }
    if (engine_flags) {
      throw UsageError("--engine-*/--nproc: apply to an engine SUT (--sut vllm:PATH | sglang:PATH | vllm-ascend:PATH | exec:CMD), "
                       "not to " + sut);
    }
    options.version = *version;
    return options;
  }
  const engine::LaunchOptions launch = Launch();
  if (nproc != 1 && engine_launch != "torchrun") {
    throw UsageError("--nproc: needs --engine-launch torchrun");
  }
  try {
    const engine::EngineSpec spec = engine::ResolveEngine(sut, launch);
    if (engine != nullptr) *engine = spec;
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return options;
}

}  // namespace r3::cli
