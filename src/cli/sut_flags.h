// --sut / --mutant / --policy, shared by every subcommand that runs a SUT.
#ifndef R3_CLI_SUT_FLAGS_H_
#define R3_CLI_SUT_FLAGS_H_

#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

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

  void AddTo(CLI::App& app);
  sut::SutOptions Resolve() const;  // throws UsageError naming the flag
};

}  // namespace r3::cli

#endif  // R3_CLI_SUT_FLAGS_H_
