#include <iostream>
#include <memory>

#include "cli/case_input.h"
#include "cli/ci_report.h"
#include "cli/commands.h"
#include "cli/gpu_flags.h"
#include "cli/producer_flags.h"
#include "cli/sut_flags.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"

namespace r3::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> cases;
  bool json = false;
  std::string junit;
  SutFlags flags;
  GpuFlags gpu;
};

void RunCheck(const CheckArgs& args, int* exit_code) {
  RejectGpuWithEngine(args.gpu, args.flags);
  // Parse every file first: bad input is exit 2 before any verdict is printed.
  std::vector<Case> cases;
  for (const std::string& path : args.cases) cases.push_back(ReadCaseArg(path));
  const std::shared_ptr<sut::Producer> producer = MakeProducer(args.flags, args.gpu);
  const std::vector<check::CaseResult> results = check::RunCases(cases, *producer);
  int failed = 0;
  std::vector<CaseRecord> records;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string source = DisplayName(args.cases[i]);
    if (!args.json) {
      std::cout << check::VerdictText(source, results[i], *producer)
                << check::DeviceLine(results[i].observation);
    }
    records.push_back(MakeRecord(source, "check", cases[i], results[i], *producer, /*listed=*/true));
    failed += results[i].PassesOrKnown() ? 0 : 1;
  }
  if (!args.junit.empty()) WriteJunit(args.junit, "r3check", records);
  if (args.json) {
    nlohmann::ordered_json j = {{"command", "check"}, {"options", check::OptionsJson(*producer)}};
    j["cases"] = nlohmann::ordered_json::array();
    for (const CaseRecord& r : records) j["cases"].push_back(RecordJson(r));
    j["passed"] = cases.size() - failed;
    j["failed"] = failed;
    j["ok"] = failed == 0;
    std::cout << j.dump(2) << "\n";
  } else if (cases.size() > 1) {
    std::cout << cases.size() - failed << " passed, " << failed << " failed\n";
  }
  *exit_code = failed > 0 ? 1 : 0;
}

}  // namespace

void AddCheckCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "check every invariant for every rank of each case");
  cmd->add_option("CASE", args->cases, "case files (r3case format; - for stdin)")->required();
  cmd->add_flag("--json", args->json,
                "print one JSON document (each case's verdict, settings, case text and "
                "violations) instead of the text");
  cmd->add_option("--junit", args->junit, "also write JUnit XML to FILE (one testcase per case)")
      ->type_name("FILE");
  args->flags.AddTo(*cmd);
  args->gpu.AddTo(*cmd);
  cmd->callback([args, exit_code] { RunCheck(*args, exit_code); });
}

}  // namespace r3::cli
