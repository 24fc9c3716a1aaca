// Runs the r3check binary (R3CHECK_BIN, set by meson test) for end-to-end
// tests: exit status, stdout and stderr, as a user or a CI script sees them.
#ifndef R3_TESTS_TESTING_R3CHECK_RUNNER_H_
#define R3_TESTS_TESTING_R3CHECK_RUNNER_H_

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/testing/run_shell.h"

namespace r3::testing {

struct R3checkResult {
  int status = -1;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A path in the temp folder that no other test process uses: the e2e test
// binaries run in parallel and must not share scratch files.
inline std::string TempPath(const std::string& name) {
  return (::testing::TempDir().empty() ? std::string("/tmp/") : ::testing::TempDir()) +
         "r3e2e-" + std::to_string(getpid()) + "-" + name;
}

// Runs `r3check ARGS` (ARGS is shell text) in `dir`, with `stdin_text` as
// standard input and `env` ("NAME=value ...", shell text) in the environment.
inline R3checkResult RunR3check(const std::string& dir, const std::string& args,
                                const std::string& stdin_text = "",
                                const std::string& env = "") {
  const char* bin = std::getenv("R3CHECK_BIN");
  EXPECT_NE(bin, nullptr) << "R3CHECK_BIN is not set (run through meson test)";
  const std::string err_path = TempPath("r3check_e2e_stderr");
  const std::string in_path = TempPath("r3check_e2e_stdin");
  std::ofstream(in_path) << stdin_text;
  const std::string cmd = "cd " + dir + " && " + env + (env.empty() ? "" : " ") +
                          (bin ? bin : "false") + " " + args + " <" + in_path + " 2>" + err_path;
  const ShellResult shell = RunShell(cmd);
  return {shell.status, shell.out, Slurp(err_path)};
}

inline int CountLines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines;
}

}  // namespace r3::testing

#endif  // R3_TESTS_TESTING_R3CHECK_RUNNER_H_
