// Runs a shell command for end-to-end tests: its exit status and stdout,
// the way a user or a CI script sees them.
#ifndef R3_TESTS_TESTING_RUN_SHELL_H_
#define R3_TESTS_TESTING_RUN_SHELL_H_

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace r3::testing {

struct ShellResult {
  int status = -1;  // exit status; -1 when the command did not exit normally
  std::string out;
};

inline ShellResult RunShell(const std::string& command) {
  ShellResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.out.append(buffer, n);
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

}  // namespace r3::testing

#endif  // R3_TESTS_TESTING_RUN_SHELL_H_
