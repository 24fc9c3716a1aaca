// Running a helper program (git) from an argument vector, no shell: its
// standard output and error read in full, its input /dev/null.
#ifndef R3_CLI_RUN_PROGRAM_H_
#define R3_CLI_RUN_PROGRAM_H_

#include <string>
#include <vector>

namespace r3::cli {

struct ProgramResult {
  // The exit status; -1 when it could not be started (error says why) or
  // was killed by a signal.
  int status = -1;
  std::string out;
  std::string err;
  std::string error;  // set when it did not run to an exit status

  bool ok() const { return status == 0; }
  // The first line of err, else error, else "exit status N": for a one-line
  // message.
  std::string FirstErrorLine() const;
};

// argv[0] is looked up on PATH.
ProgramResult RunProgram(const std::vector<std::string>& argv);

}  // namespace r3::cli

#endif  // R3_CLI_RUN_PROGRAM_H_
