// Which paths a run reads and which it writes, so that no command ever
// writes over one of its own inputs (`check --junit corpus/seeds/*.r3case`,
// the file name forgotten, used to overwrite the first seed).
//
// Outputs are claimed while the command line is parsed (GuardOutputOptions
// puts a check on every output flag), inputs when they are read (ClaimInput).
// A clash either way is a UsageError naming the output flag and the path,
// raised before anything is written.
#ifndef R3_CLI_OUTPUT_GUARD_H_
#define R3_CLI_OUTPUT_GUARD_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace r3::cli {

// Puts the output checks on every command's --junit and --svg (a file) and
// --save-failures (a folder).
void GuardOutputOptions(CLI::App& app);

// Claims `path` as a file this run will write for `flag`. Refuses an
// existing file that is a case file or not of the kind the flag writes.
void ClaimOutputFile(const std::string& flag, const std::string& path);

// Claims `path` as a folder this run writes files into for `flag`.
void ClaimOutputFolder(const std::string& flag, const std::string& path);

// Records `path` ("-": standard input) as read by this run. Throws
// UsageError when it is a claimed output (the output is dropped first, so
// nothing is ever written to it).
void ClaimInput(const std::string& path);

// Records folder `path` as read by this run: no claimed output folder may be
// it.
void ClaimInputFolder(const std::string& path);

// The run ends in exit 2 or 3 with `message`: every claimed --junit file
// becomes a JUnit report with one error testcase holding it, and every other
// claimed file is removed, so no output of an earlier run stays in place
// looking like this run's.
void RecordFailureInOutputs(const std::string& message);

// For a command line that could not be parsed (the output flags' own checks
// may not have run): claims each existing regular file named by --junit or
// --svg in `args`, if the usual checks allow writing it, so that
// RecordFailureInOutputs replaces an earlier run's report.
void ClaimOutputsOfUnparsedLine(const std::vector<std::string>& args);

// True when `path` is the same file as an input of this run.
bool IsInput(const std::string& path);

}  // namespace r3::cli

#endif  // R3_CLI_OUTPUT_GUARD_H_
