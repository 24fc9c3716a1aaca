// The r3check subcommands. Each Add*Command registers itself on the app and
// sets *exit_code when it runs: 0 all invariants hold, 1 a violation, 2 bad
// input.
#ifndef R3_CLI_COMMANDS_H_
#define R3_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace r3::cli {

void AddCheckCommand(CLI::App& app, int* exit_code);
void AddExplainCommand(CLI::App& app, int* exit_code);
void AddSizingCommand(CLI::App& app, int* exit_code);
void AddVerifyCommand(CLI::App& app, int* exit_code);
void AddMutantsCommand(CLI::App& app, int* exit_code);
void AddMinimizeCommand(CLI::App& app, int* exit_code);
void AddEnginesCommand(CLI::App& app, int* exit_code);
void AddSweepCommand(CLI::App& app, int* exit_code);

}  // namespace r3::cli

#endif  // R3_CLI_COMMANDS_H_
