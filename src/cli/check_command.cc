#include <iostream>
#include <memory>

#include "cli/case_input.h"
#include "cli/commands.h"
#include "cli/gpu_flags.h"
#include "cli/sut_flags.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"

namespace r3::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> cases;
  SutFlags flags;
  GpuFlags gpu;
};

void RunCheck(const CheckArgs& args, int* exit_code) {
  RejectGpuWithEngine(args.gpu, args.flags);
  // Parse every file first: bad input is exit 2 before any verdict is printed.
  std::vector<Case> cases;
  for (const std::string& path : args.cases) cases.push_back(ReadCaseArg(path));
  const sut::SutOptions options = args.flags.Resolve();
  std::unique_ptr<GpuChecker> gpu;
  if (args.gpu.gpu) gpu = std::make_unique<GpuChecker>(args.gpu, options);
  std::vector<std::string> gpu_lines;
  const std::vector<check::CaseResult> results = JudgeCases(gpu.get(), cases, options, &gpu_lines);
  int failed = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::cout << check::VerdictText(DisplayName(args.cases[i]), results[i], options) << gpu_lines[i];
    failed += results[i].PassesOrKnown() ? 0 : 1;
  }
  if (cases.size() > 1) {
    std::cout << cases.size() - failed << " passed, " << failed << " failed\n";
  }
  *exit_code = failed > 0 ? 1 : 0;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "check every invariant for every rank of each case");
  cmd->add_option("CASE", args->cases, "case files (r3case format; - for stdin)")->required();
  args->flags.AddTo(*cmd);
  args->gpu.AddTo(*cmd);
  cmd->callback([args, exit_code] { RunCheck(*args, exit_code); });
}

}  // namespace r3::cli
