#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "cli/case_input.h"
#include "cli/commands.h"
#include "cli/gpu_flags.h"
#include "cli/sut_flags.h"
#include "r3/case/case_format.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"
#include "r3/sample/case_sampler.h"

namespace r3::cli {
namespace {

struct VerifyArgs {
  int64_t cases = 10000;
  uint64_t seed = 1;
  std::string corpus;
  SutFlags flags;
  GpuFlags gpu;
};

struct Tally {
  int64_t cases = 0;
  int64_t pass = 0;
  int64_t known = 0;
  int64_t fail = 0;
};

class Verifier {
 public:
  Verifier(const VerifyArgs& args, sut::SutOptions options)
      : args_(args), options_(std::move(options)) {
    if (args_.gpu.gpu) gpu_ = std::make_unique<GpuChecker>(args_.gpu, options_);
  }

  int Run() {
    const std::string corpus = args_.corpus.empty() ? DefaultCorpusDir() : args_.corpus;
    // A mistyped folder would otherwise verify nothing but generated cases
    // and still say OK.
    std::error_code ec;
    if (!std::filesystem::is_directory(corpus, ec)) {
      throw UsageError((args_.corpus.empty() ? "R3CHECK_CORPUS" : "--corpus") +
                       std::string(": no such folder: ") + corpus);
    }
    std::cout << "r3check verify: " << check::DescribeOptions(options_)
              << (gpu_ ? ", on the GPU path" : "") << "\n"
              << "corpus " << corpus << ", " << args_.cases << " generated cases, seed "
              << args_.seed << "\n\n";
    // Regressions run first: they are the cases that failed before.
    RunFiles("regressions", ListCaseFiles(corpus + "/regressions"), /*expect_finding=*/false);
    RunFiles("seeds", ListCaseFiles(corpus + "/seeds"), /*expect_finding=*/false);
    RunFiles("findings", ListCaseFiles(corpus + "/findings"), /*expect_finding=*/true);
    RunGenerated();
    PrintSummary();
    return failures_ > 0 ? 1 : 0;
  }

 private:
  void Judge(const std::string& source, const std::string& label, const Case& c,
             const check::CaseResult& result, const std::string& gpu_line, bool expect_finding) {
    Tally& tally = tallies_[label];
    ++tally.cases;
    for (const check::KnownFinding* f : result.explained) {
      if (f != nullptr) ++finding_counts_[std::string(f->id)];
    }
    if (!result.PassesOrKnown()) {
      ++tally.fail;
      ++failures_;
      std::cout << check::VerdictText(source, result, options_) << gpu_line << "--- case ---\n"
                << PrintCase(c) << "------------\n";
    } else if (!result.verdict.ok()) {
      ++tally.known;
    } else if (expect_finding) {
      // A pinned finding that no longer fails: vLLM's behaviour changed.
      ++tally.fail;
      ++failures_;
      std::cout << source << ": FAIL, the known finding no longer reproduces ("
                << check::DescribeOptions(options_) << ")\n";
    } else {
      ++tally.pass;
    }
  }

  // Judges a batch (an engine SUT sees it as one request).
  void JudgeAll(const std::vector<std::string>& sources, const std::string& label,
                const std::vector<Case>& cases, bool expect_finding) {
    std::vector<std::string> gpu_lines;
    const std::vector<check::CaseResult> results =
        JudgeCases(gpu_.get(), cases, options_, &gpu_lines);
    for (size_t i = 0; i < cases.size(); ++i) {
      Judge(sources[i], label, cases[i], results[i], gpu_lines[i], expect_finding);
    }
  }

  void RunFiles(const std::string& label, const std::vector<std::string>& files,
                bool expect_finding) {
    tallies_[label];
    order_.push_back(label);
    std::vector<Case> cases;
    for (const std::string& path : files) cases.push_back(LoadCaseFile(path));
    JudgeAll(files, label, cases, expect_finding);
  }

  void RunGenerated() {
    order_.push_back("generated");
    tallies_["generated"];
    sample::CaseSampler sampler(args_.seed);
    const auto start = std::chrono::steady_clock::now();
    auto last_report = start;
    constexpr int64_t kBatch = 256;
    for (int64_t i = 0; i < args_.cases; i += kBatch) {
      const int64_t count = std::min(kBatch, args_.cases - i);
      std::vector<Case> cases;
      std::vector<std::string> sources;
      for (int64_t k = 0; k < count; ++k) {
        cases.push_back(sampler.Next());
        sources.push_back("generated case " + std::to_string(i + k) + " (seed " +
                          std::to_string(args_.seed) + ")");
      }
      JudgeAll(sources, "generated", cases, /*expect_finding=*/false);
      const auto now = std::chrono::steady_clock::now();
      const int64_t done = i + count;
      if (now - last_report >= std::chrono::seconds(2) && done < args_.cases) {
        const double seconds = std::chrono::duration<double>(now - start).count();
        const double rate = static_cast<double>(done) / seconds;
        std::fprintf(stderr, "verify: %lld/%lld generated cases, %.0f cases/s, %.0f s left, %lld failing so far\n",
                     static_cast<long long>(done), static_cast<long long>(args_.cases), rate,
                     static_cast<double>(args_.cases - done) / rate,
                     static_cast<long long>(failures_));
        last_report = now;
      }
    }
  }

  void PrintSummary() const {
    Tally total;
    char line[128];
    std::printf("%-12s %8s %8s %8s %8s\n", "source", "cases", "pass", "known", "fail");
    std::cout.flush();
    for (const std::string& label : order_) {
      const Tally& t = tallies_.at(label);
      std::snprintf(line, sizeof line, "%-12s %8lld %8lld %8lld %8lld\n", label.c_str(),
                    static_cast<long long>(t.cases), static_cast<long long>(t.pass),
                    static_cast<long long>(t.known), static_cast<long long>(t.fail));
      std::cout << line;
      total.cases += t.cases;
      total.pass += t.pass;
      total.known += t.known;
      total.fail += t.fail;
    }
    std::snprintf(line, sizeof line, "%-12s %8lld %8lld %8lld %8lld\n", "total",
                  static_cast<long long>(total.cases), static_cast<long long>(total.pass),
                  static_cast<long long>(total.known), static_cast<long long>(total.fail));
    std::cout << line;
    if (!finding_counts_.empty()) {
      std::cout << "known-finding violations (see corpus/findings/):";
      for (const auto& [id, count] : finding_counts_) std::cout << " " << id << " x" << count;
      std::cout << "\n";
    }
    std::cout << (failures_ == 0 ? "verify: OK\n" : "verify: FAILED\n");
  }

  const VerifyArgs& args_;
  sut::SutOptions options_;
  std::unique_ptr<GpuChecker> gpu_;
  std::map<std::string, Tally> tallies_;
  std::vector<std::string> order_;
  std::map<std::string, int64_t> finding_counts_;
  int64_t failures_ = 0;
};

// CLI11 alone wraps "-3" to 2^64 - 3 and clamps 2^64 to 2^64 - 1 for an
// unsigned option: a mistyped seed would silently verify other cases.
CLI::Validator Unsigned64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (text.empty() || error != std::errc() || stop != end) {
          return "must be an integer in [0, 2^64 - 1], not '" + text + "'";
        }
        return "";
      },
      "UINT64");
}

}  // namespace

void AddVerifyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "the main job: the corpus (regressions first) plus N seeded generated cases");
  cmd->add_option("--cases", args->cases, "generated cases to check")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--seed", args->seed, "seed of the case sampler")->check(Unsigned64());
  cmd->add_option("--corpus", args->corpus, "corpus folder (default: the source tree's corpus/)");
  args->flags.AddTo(*cmd);
  args->gpu.AddTo(*cmd);
  cmd->callback([args, exit_code] {
    RejectGpuWithEngine(args->gpu, args->flags);
    *exit_code = Verifier(*args, args->flags.Resolve()).Run();
  });
}

}  // namespace r3::cli
