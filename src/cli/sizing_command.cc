#include <iostream>
#include <memory>

#include "cli/case_input.h"
#include "cli/commands.h"
#include "cli/output_file.h"
#include "cli/sut_flags.h"
#include "r3/check/layout_svg.h"
#include "r3/check/sizing_report.h"

namespace r3::cli {
namespace {

struct SizingArgs {
  std::string path;
  bool json = false;
  std::string svg;
  std::vector<std::string> mutants;
};

void RunSizing(const SizingArgs& args, int* exit_code) {
  SutFlags flags;
  flags.mutants = args.mutants;
  const sut::SutOptions options = flags.Resolve();
  const Case c = ReadCaseArg(args.path);
  const check::SizingReport report = check::BuildSizingReport(c, options.mutants);
  if (!args.svg.empty()) WriteOutputFile("--svg", args.svg, check::SizingSvg(c, options.mutants));
  if (args.json) {
    std::cout << check::SizingJson(report).dump(2) << "\n";
  } else {
    std::cout << check::SizingText(c, report);
  }
  *exit_code = 0;
}

}  // namespace

void AddSizingCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SizingArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sizing", "the exact replay-buffer bound and each policy's rows, safety, slack and bytes");
  cmd->add_option("CASE", args->path, "case file (- for stdin)")->required();
  cmd->add_flag("--json", args->json, "print JSON instead of text");
  cmd->add_option("--svg", args->svg,
                  "also plot each policy's rows against the exact bound over M to FILE (SVG)")
      ->type_name("FILE");
  cmd->add_option("--mutant", args->mutants, "switch on a seeded sizing bug (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->callback([args, exit_code] { RunSizing(*args, exit_code); });
}

}  // namespace r3::cli
