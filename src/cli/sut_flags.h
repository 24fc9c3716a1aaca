// --sut / --mutant / --policy and the engine flags, shared by every
// subcommand that runs a SUT.
#ifndef R3_CLI_SUT_FLAGS_H_
#define R3_CLI_SUT_FLAGS_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "r3/engine/engine_sut.h"
#include "r3/sut/sut.h"

namespace r3::cli {

// Bad command-line input: printed as one line, exit status 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

struct SutFlags {
  std::string sut = "vllm-post-50874";
  std::vector<std::string> mutants;
  std::string policy = "pr50874";
  // Engine SUTs (--sut vllm:PATH | exec:CMD); docs/engines.md.
  std::string engine_python;
  std::string engine_launch = "none";
  int64_t nproc = 1;
  std::vector<std::string> engine_launch_args;
  std::string engine_device = "cpu";
  static constexpr double kDefaultEngineTimeoutS = 60;
  double engine_timeout_s = kDefaultEngineTimeoutS;
  std::string engine_sizing;  // --engine-sizing FILE: vLLM's sizing code (vllm:PATH)
  std::string engine_base;  // --engine-base PATH: the vLLM capturer a vllm-ascend patch applies over
  // No flag: sweep sets it to its fork server's socket (LaunchOptions::fork_server).
  std::string fork_server;

  void AddTo(CLI::App& app);
  // The plain settings, every flag checked (UsageError naming it), and for
  // an engine SUT its adapter command in *engine when given (not touched
  // otherwise). Starts nothing: MakeProducer (producer_flags.h) does.
  sut::SutOptions Options(engine::EngineSpec* engine = nullptr) const;
  bool IsEngine() const;
  // The engine flags as the engine layer takes them (not checked: Options does).
  engine::LaunchOptions Launch() const;
};

}  // namespace r3::cli

#endif  // R3_CLI_SUT_FLAGS_H_
