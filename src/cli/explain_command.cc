#include <iostream>
#include <memory>

#include "cli/case_input.h"
#include "cli/commands.h"
#include "cli/gpu_flags.h"
#include "cli/output_file.h"
#include "cli/producer_flags.h"
#include "cli/sut_flags.h"
#include "r3/check/layout_svg.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"

namespace r3::cli {
namespace {

struct ExplainArgs {
  std::string path;
  bool json = false;
  std::string svg;
  SutFlags flags;
  GpuFlags gpu;
};

void RunExplain(const ExplainArgs& args, int* exit_code) {
  RejectGpuWithEngine(args.gpu, args.flags);
  const Case c = ReadCaseArg(args.path);
  const std::shared_ptr<sut::Producer> producer = MakeProducer(args.flags, args.gpu);
  const check::CaseResult result = std::move(check::RunCases({&c, 1}, *producer).at(0));
  if (!args.svg.empty()) WriteOutputFile("--svg", args.svg, check::LayoutSvg(c, result, *producer));
  if (args.json) {
    std::cout << check::ExplainJson(c, result, *producer).dump(2) << "\n";
  } else {
    std::cout << check::ExplainText(c, result, *producer);
  }
  *exit_code = result.PassesOrKnown() ? 0 : 1;
}

}  // namespace

void AddExplainCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ExplainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "show the layout, an ASCII strip of each gathered tensor, and every rank's capture");
  cmd->add_option("CASE", args->path, "case file (- for stdin)")->required();
  cmd->add_flag("--json", args->json, "print JSON instead of text");
  cmd->add_option("--svg", args->svg,
                  "also draw the gathered tensors and every rank's capture to FILE (SVG)")
      ->type_name("FILE");
  args->flags.AddTo(*cmd);
  args->gpu.AddTo(*cmd);
  cmd->callback([args, exit_code] { RunExplain(*args, exit_code); });
}

}  // namespace r3::cli
