// r3check minimize CASE: shrink a failing case while the same invariants
// still fail; print it (a valid case file with `#` explanation lines) and
// optionally save it as a regression case.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "cli/case_input.h"
#include "cli/commands.h"
#include "cli/data_dirs.h"
#include "cli/gpu_flags.h"
#include "cli/number_flags.h"
#include "cli/output_guard.h"
#include "cli/producer_flags.h"
#include "cli/sut_flags.h"
#include "r3/check/report.h"
#include "r3/minimize/minimize.h"
#include "r3/sut/mutants.h"

namespace r3::cli {
namespace {

constexpr int64_t kMaxBudgetMs = 86'400'000;

struct MinimizeArgs {
  std::string path;
  SutFlags flags;
  GpuFlags gpu;
  int64_t budget_ms = minimize::MinimizeOptions{}.budget_ms;
  int invariant = 0;  // 0: keep the input's exact set of failing invariants
  std::string save_name;
  CLI::Option* save = nullptr;
};

bool IsSafeName(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '+';
    if (!ok) return false;
  }
  return true;
}

void Save(const std::string& name, const std::string& text) {
  if (!IsSafeName(name)) {
    throw UsageError("--save: name '" + name + "' must be letters, digits, '-', '_', '.', '+'");
  }
  const std::filesystem::path dir = std::filesystem::path(DefaultCorpusDir()) / "regressions";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path path = dir / (name + ".r3case");
  if (IsInput(path.string())) {
    throw UsageError("--save: " + path.string() + " is the CASE this run reads; not writing it");
  }
  const bool exists = std::filesystem::exists(path, ec);
  if (ec) throw UsageError("--save: cannot read " + path.string() + ": " + ec.message());
  if (exists) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream old;
    old << in.rdbuf();
    if (old.str() != text) {
      throw UsageError("--save: " + path.string() + " exists with other content; pick another NAME");
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw UsageError("--save: cannot write " + path.string());
  std::cerr << "saved " << path.string() << '\n';
}

void RunMinimize(const MinimizeArgs& args, int* exit_code) {
  // The case first: a bad file is exit 2 before any engine starts.
  RejectGpuWithEngine(args.gpu, args.flags);
  // The regression suite replays saved cases on the host, where a GPU-only
  // mutant changes nothing: such a file would fail it at once.
  if (args.save->count() > 0) {
    for (const std::string& name : args.flags.mutants) {
      const auto m = sut::FindMutant(name);
      if (m && sut::GetMutantInfo(*m).gpu_only) {
        throw UsageError("--save: --mutant " + name + " lives in the GPU capture path, and "
                         "corpus/regressions/ is replayed on the host, where the case would "
                         "pass; keep the printed case instead");
      }
    }
  }
  // A bigger budget overflows the deadline: "budget exhausted" at once.
  if (args.budget_ms > kMaxBudgetMs) {
    throw UsageError("--budget-ms: must be at most " + std::to_string(kMaxBudgetMs) + " (a day)");
  }
  const Case c = ReadCaseArg(args.path);
  minimize::MinimizeOptions options;
  options.producer = MakeProducer(args.flags, args.gpu);
  if (args.budget_ms < 1) throw UsageError("--budget-ms: must be at least 1");
  options.budget_ms = args.budget_ms;
  if (args.invariant != 0) {
    if (args.invariant < 1 || args.invariant > check::kNumInvariants) {
      throw UsageError("--invariant: must be in [1, 7]");
    }
    options.invariant = static_cast<check::Invariant>(args.invariant);
  }
  const minimize::MinimizeResult result = minimize::Minimize(c, options);
  if (!result.input_fails) {
    std::cout << "nothing to minimize: " << args.path << " does not fail";
    if (options.invariant) {
      std::cout << " invariant " << minimize::InvariantList({*options.invariant});
    }
    std::cout << " (" << check::DescribeOptions(*options.producer) << ")\n";
    *exit_code = 1;
    return;
  }
  const std::string text = minimize::MinimizedText(result, *options.producer);
  std::cout << text;
  if (args.save->count() > 0) {
    Save(args.save_name.empty() ? minimize::DefaultRegressionName(result, *options.producer)
                                : args.save_name,
         text);
  }
  *exit_code = 0;
}

}  // namespace

void AddMinimizeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<MinimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "minimize", "shrink a failing case while the same invariants fail (exit 0 minimized, "
                  "1 input does not fail, 2 bad input)");
  cmd->add_option("CASE", args->path, "case file (r3case format; - for stdin)")->required();
  args->flags.AddTo(*cmd);
  args->gpu.AddTo(*cmd);
  cmd->add_option("--budget-ms", args->budget_ms,
                  "time budget in milliseconds (default " + std::to_string(args->budget_ms) + ")")
      ->transform(Decimal());
  cmd->add_option("--invariant", args->invariant,
                  "keep only this invariant (1-7) failing instead of the input's exact set")
      ->transform(Decimal());
  args->save = cmd->add_option("--save", args->save_name,
                               "write corpus/regressions/NAME.r3case (NAME defaults to "
                               "<mutant or sut>-<policy>-inv<N>)")
                   ->expected(0, 1);
  cmd->callback([args, exit_code] { RunMinimize(*args, exit_code); });
}

}  // namespace r3::cli
