#include <iostream>
#include <algorithm>
#include <memory>
#include <optional>

#include "cli/case_input.h"
#include "cli/commands.h"
#include "cli/gpu_flags.h"
#include "cli/output_file.h"
#include "cli/producer_flags.h"
#include "cli/sut_flags.h"
#include "r3/check/layout_svg.h"
#include "r3/check/report.h"
#include "r3/check/sizing_report.h"

namespace r3::cli {
namespace {

struct SizingArgs {
  std::string path;
  bool json = false;
  std::string svg;
  SutFlags flags;  // --mutant, and --sut with the engine flags
  GpuFlags gpu;    // --gpu: the step once on the device, beside the report
  CLI::Option* policy = nullptr;
  CLI::Option* sut = nullptr;
};

// The case once through an engine that loaded its own sizing code: the rows
// each rank's buffer got, and what the step did with them.
check::EngineSizing EngineSizingOf(const Case& c, sut::Producer& engine,
                                   const std::string& sut) {
  const std::string label = engine.SizingLabel();
  if (label.empty()) {
    throw UsageError("sizing --sut " + sut +
                     ": the engine loaded no sizing code (its hello has no \"sizing\"); give the "
                     "file with --engine-sizing FILE (modular_kernel.py or the RoutedExpertsSink "
                     "file), or a vLLM checkout as vllm:PATH");
  }
  const sut::Observation obs = engine.Observe({&c, 1}).at(0);
  check::EngineSizing e;
  e.label = label;
  bool reported = false;
  for (const sut::RankObservation& r : obs.ranks) {
    if (r.replay_rows < 0) continue;
    e.rows = reported ? std::min(e.rows, r.replay_rows) : r.replay_rows;
    e.max_rows = reported ? std::max(e.max_rows, r.replay_rows) : r.replay_rows;
    reported = true;
    e.kernel_rows = std::max(e.kernel_rows, r.n);
    if (e.step_error.empty()) e.step_error = r.replay_error;
    if (r.kernel_slice_rows >= 0 && r.kernel_slice_rows < r.n) {
      ++e.short_slices;
      e.shortest_slice =
          e.shortest_slice < 0 ? r.kernel_slice_rows : std::min(e.shortest_slice, r.kernel_slice_rows);
    }
  }
  if (!reported) {
    throw sut::ExternalSutError("engine " + sut +
                                ": its sizing code reported no replay_rows for this case");
  }
  return e;
}

// The step on the device: the replay buffer the built-in policy gave, the
// kernel input rows each rank handed the stand-in kernel, and vLLM's buffer
// check as the device path ran it.
std::string GpuStepText(const sut::Observation& obs) {
  std::string error;
  for (const sut::RankObservation& r : obs.ranks) {
    if (error.empty()) error = r.replay_error;
  }
  return "\nthe step on the GPU: replay buffer " + std::to_string(obs.replay_rows) +
         " rows (policy " + obs.policy + "), kernel input " + std::to_string(obs.kernel_rows) +
         " rows: " + (error.empty() ? std::string("fits") : error) + "\n" +
         check::DeviceLine(obs);
}

nlohmann::ordered_json GpuStepJson(const sut::Observation& obs) {
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const sut::RankObservation& r : obs.ranks) {
    if (!r.replay_error.empty()) {
      errors.push_back({{"dp", r.dp}, {"tp", r.tp}, {"replay_error", r.replay_error}});
    }
  }
  return {{"replay_rows", obs.replay_rows},
          {"policy", obs.policy},
          {"kernel_rows", obs.kernel_rows},
          {"replay_errors", errors},
          {"device", check::DeviceJson(obs)}};
}

void RunSizing(const SizingArgs& args, int* exit_code) {
  if (args.policy != nullptr && args.policy->count() > 0) {
    throw UsageError("--policy: sizing reports every built-in policy; it takes none");
  }
  if (!args.flags.IsEngine() && args.sut != nullptr && args.sut->count() > 0) {
    throw UsageError("--sut " + args.flags.sut +
                     ": sizing reports the built-in policies whatever the built-in SUT; --sut "
                     "here takes an engine (vllm:PATH | exec:CMD)");
  }
  RejectGpuWithEngine(args.gpu, args.flags);
  // A bad case file is exit 2 before a GPU starts (an engine starts first,
  // as it always did).
  std::optional<Case> read_first;
  if (!args.flags.IsEngine()) read_first = ReadCaseArg(args.path);
  const std::shared_ptr<sut::Producer> producer = MakeProducer(args.flags, args.gpu);
  const sut::MutantSet& mutants = producer->options().mutants;
  const Case c = read_first ? *read_first : ReadCaseArg(args.path);
  std::optional<check::EngineSizing> engine;
  if (args.flags.IsEngine()) engine = EngineSizingOf(c, *producer, args.flags.sut);
  std::optional<sut::Observation> device;
  if (args.gpu.gpu) device = producer->Observe({&c, 1}).at(0);
  const check::SizingReport report = check::BuildSizingReport(c, mutants, engine);
  if (!args.svg.empty()) WriteOutputFile("--svg", args.svg, check::SizingSvg(c, mutants));
  if (args.json) {
    nlohmann::ordered_json j = check::SizingJson(report);
    if (device) j["gpu"] = GpuStepJson(*device);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << check::SizingText(c, report);
    if (device) std::cout << GpuStepText(*device);
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
  // --mutant (a seeded sizing bug), and --sut ENGINE with the engine flags:
  // vLLM's own sizing code beside the built-in policies.
  args->flags.AddTo(*cmd);
  args->gpu.AddTo(*cmd);
  args->policy = cmd->get_option("--policy");
  args->sut = cmd->get_option("--sut");
  cmd->callback([args, exit_code] { RunSizing(*args, exit_code); });
}

}  // namespace r3::cli
