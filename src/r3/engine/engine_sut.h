// Engine SUTs: `--sut vllm:PATH` runs vLLM's own capture code (from a
// checkout, a single file, or the installed package) through the adapter in
// engines/vllm/; `--sut exec:CMD` runs any adapter that speaks the protocol
// (docs/engines.md). Either way the result is a sut::Producer, so every
// front end judges the engine exactly like a built-in SUT.
#ifndef R3_ENGINE_ENGINE_SUT_H_
#define R3_ENGINE_ENGINE_SUT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "r3/sut/producer.h"

namespace r3::engine {

// How to start an adapter; the CLI's --engine-* flags.
struct LaunchOptions {
  std::string python;          // interpreter for Python adapters
  std::string launch = "none";  // none | torchrun
  int64_t nproc = 1;           // torchrun --nproc-per-node
  std::vector<std::string> launch_args;  // extra torchrun arguments (rendezvous, nodes)
  std::string device = "cpu";  // cpu | cuda
  std::string adapters_dir;    // where engines/NAME/ live
  int64_t timeout_ms = 60000;  // per request, hello included
  std::string sizing;          // --engine-sizing FILE (vllm:PATH only)
  // --engine-base PATH (vllm-ascend:PATH only): the vLLM capturer that
  // vllm-ascend's patch is applied over.
  std::string base;
  // A fork server's socket (fork_server.h): vllm:PATH adapters under
  // --engine-launch none are forked by it; empty: exec'd.
  std::string fork_server;
};

struct EngineSpec {
  std::string sut;                // as given: "vllm:PATH" or "exec:CMD"
  std::string kind;               // vllm | sglang | vllm-ascend | exec
  std::vector<std::string> argv;  // the adapter command
  int64_t timeout_ms = 60000;
  // How long the adapter may take to exit after "bye": torchrun's agent
  // first waits for its workers and for every node's agent (exit barrier).
  int64_t exit_grace_ms = 500;
  // The engine flags that reproduce this launch, as shell words after
  // --sut (" --engine-device cuda"): replay hints copy them.
  std::string replay_flags;
  // LaunchOptions::fork_server, where it applies (vllm:PATH, --engine-launch none).
  std::string fork_server;
};

struct AdapterInfo {
  std::string_view name;
  std::string_view usage;
  std::string_view needs;
};

// The adapters `r3check engines` lists.
std::span<const AdapterInfo> AdapterCatalogue();

// True for "vllm:..." and "exec:...".
bool IsEngineSut(std::string_view sut);

// Builds the adapter command for an engine SUT. Throws std::invalid_argument
// with a one-line message (a missing path, an empty command, a bad launch).
EngineSpec ResolveEngine(const std::string& sut, const LaunchOptions& launch);

// The interpreter of Python adapters: launch.python, else $R3_PYTHON, else
// /usr/bin/python3 where it exists (Debian's python3-torch), else python3.
std::string AdapterPython(const LaunchOptions& launch);

// One shell word: `word` itself when it is plain, else single-quoted.
std::string ShellWord(const std::string& word);

// Starts the adapter and reads its hello. The engine runs its own capture
// under r3check's dispatch and sizing (and their mutants) from `options`.
// Throws sut::ExternalSutError.
std::shared_ptr<sut::Producer> StartEngine(const EngineSpec& spec, const sut::SutOptions& options);

// Requests stay small enough to build and parse quickly, and their replies
// below the protocol's line cap (ReplyLineCap; protocol_test measures the
// reply to the largest batch). One case of up to kMaxEngineRanks ranks
// still goes alone.
inline constexpr size_t kMaxCasesPerRequest = 256;
inline constexpr int64_t kMaxRanksPerRequest = 2048;

// The largest case an engine SUT takes: its rows become real tensors.
inline constexpr int64_t kMaxEngineRanks = 4096;
inline constexpr int64_t kMaxEngineRowsPerRank = int64_t{1} << 22;

}  // namespace r3::engine

#endif  // R3_ENGINE_ENGINE_SUT_H_
