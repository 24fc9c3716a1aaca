// r3check: property-based verification of vLLM's routed-experts capture.
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/output_guard.h"
#include "cli/sut_flags.h"
#include "r3/case/case_format.h"
#include "r3/case/checked_math.h"
#include "r3/sut/producer.h"
#include "r3check_config.h"

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, named like
  // any other write error, instead of killing r3check mid-file.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"r3check: checks vLLM's routing-replay capture and buffer sizing against a "
               "reference model of gathered-shard layouts"};
  app.name("r3check");
  app.set_version_flag("--version", "r3check " R3CHECK_VERSION);
  // Every option's default shows in --help (subcommands inherit this).
  app.option_defaults()->always_capture_default();
  app.footer(
      "Examples:\n"
      "  r3check verify                                   # the main job: corpus + 10000 cases\n"
      "  r3check check --sut vllm-pre-50874 corpus/seeds/tp2-dp2-eager.r3case\n"
      "  r3check explain --svg eager.svg corpus/seeds/tp2-dp2-eager.r3case\n"
      "  r3check minimize --mutant no-sp-trim --save my-bug x.r3case  # keep a failure, shrunk\n"
      "  r3check verify --sut vllm:~/vllm --junit r3.xml   # your vLLM checkout, for CI\n"
      "Exit status: 0 pass, 1 a violation, 2 bad input (docs/cli.md).");
  app.require_subcommand(1);
  int exit_code = 0;
  r3::cli::AddCheckCommand(app, &exit_code);
  r3::cli::AddExplainCommand(app, &exit_code);
  r3::cli::AddSizingCommand(app, &exit_code);
  r3::cli::AddVerifyCommand(app, &exit_code);
  r3::cli::AddMutantsCommand(app, &exit_code);
  r3::cli::AddMinimizeCommand(app, &exit_code);
  r3::cli::AddEnginesCommand(app, &exit_code);
  r3::cli::AddSweepCommand(app, &exit_code);
  // After every command is registered: no output may be one of the inputs.
  r3::cli::GuardOutputOptions(app);
  // A first word that is no command (a typo, or nothing at all) gets the
  // usage, not CLI11's "A subcommand is required".
  const auto is_command = [&app](const char* word) {
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_name() == word) return true;
    }
    return false;
  };
  if (argc < 2 || (argv[1][0] != '-' && !is_command(argv[1]))) {
    if (argc >= 2) std::fprintf(stderr, "r3check: unknown command '%s'\n\n", argv[1]);
    std::fprintf(stderr, "%s", app.help().c_str());
    return 2;
  }
  // A run that ends in error leaves no earlier run's output looking like its own.
  const auto fail = [](int code, const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    r3::cli::RecordFailureInOutputs(line);
    return code;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    r3::cli::ClaimOutputsOfUnparsedLine(std::vector<std::string>(argv + 1, argv + argc));
    return fail(2, std::string("r3check: ") + e.what());
  } catch (const r3::CaseFormatError& e) {
    return fail(2, e.what());
  } catch (const r3::cli::UsageError& e) {
    // Raised by one flag's check, maybe before another output flag's ran.
    r3::cli::ClaimOutputsOfUnparsedLine(std::vector<std::string>(argv + 1, argv + argc));
    return fail(2, std::string("r3check: ") + e.what());
  } catch (const r3::sut::ExternalSutError& e) {
    return fail(2, std::string("r3check: ") + e.what());
  } catch (const r3::OverflowError& e) {
    return fail(2, std::string("r3check: ") + e.what());
  } catch (const std::exception& e) {
    return fail(3, std::string("r3check: internal error: ") + e.what());
  }
  // A verdict that never reached its reader (a full disk, a closed pipe
  // read by nobody) must not pass for a clean run.
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fprintf(stderr, "r3check: cannot write to standard output\n");
    return 2;
  }
  return exit_code;
}
