#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <unistd.h>

#include "cli/case_input.h"
#include "cli/ci_report.h"
#include "cli/output_file.h"
#include "cli/output_guard.h"
#include "cli/replay_hint.h"
#include "cli/commands.h"
#include "cli/data_dirs.h"
#include "cli/gpu_flags.h"
#include "cli/number_flags.h"
#include "cli/producer_flags.h"
#include "cli/sut_flags.h"
#include "cli/verify_cases.h"
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
  bool json = false;
  std::string junit;
  std::string save_failures;
  std::string replay;  // SEED:INDEX
  bool progress = false;
  int64_t max_failures = 20;       // printed in full; the rest only counted
  bool max_failures_given = false; // --json lists every failure unless given
  SutFlags flags;
  GpuFlags gpu;
};

struct Tally {
  int64_t cases = 0;
  int64_t pass = 0;
  int64_t known = 0;
  int64_t fail = 0;

  void Add(const Tally& t) {
    cases += t.cases;
    pass += t.pass;
    known += t.known;
    fail += t.fail;
  }
};

class Verifier {
 public:
  Verifier(const VerifyArgs& args, std::shared_ptr<sut::Producer> producer)
      : args_(args), producer_(std::move(producer)) {}

  int Run() {
    if (!args_.replay.empty()) return Replay();
    const std::string corpus = ResolveVerifyCorpus(args_.corpus);
    std::error_code ec;
    // Everything it reads is claimed before anything is written: no output
    // (--junit, --save-failures) may be a corpus file or folder.
    const CorpusFiles files = ListVerifyCorpus(corpus);
    ClaimInputFolder(corpus);
    for (const char* sub : {"/regressions", "/seeds", "/findings"}) ClaimInputFolder(corpus + sub);
    for (const auto* list : {&files.regressions, &files.seeds, &files.findings}) {
      for (const std::string& path : *list) ClaimInput(path);
    }
    if (!args_.save_failures.empty()) {
      std::filesystem::create_directories(args_.save_failures, ec);
      std::error_code is_dir_ec;
      if (!std::filesystem::is_directory(args_.save_failures, is_dir_ec)) {
        throw UsageError("--save-failures: cannot create the folder " + args_.save_failures +
                         (ec ? " (" + ec.message() + ")" : ""));
      }
    }
    corpus_ = corpus;
    text() << "r3check verify: " << check::DescribeOptions(*producer_)
           << (args_.gpu.gpu ? ", on the GPU path" : "") << "\n"
           << "corpus " << corpus << ", " << args_.cases << " generated cases, seed "
           << args_.seed << "\n\n";
    RunAll(files);
    PrintSummary();
    PrintFailures();
    if (!args_.junit.empty()) WriteJunit(args_.junit, "r3check-verify", records_);
    if (args_.json) PrintJson();
    return failures_ > 0 ? 1 : 0;
  }

 private:
  // The text report goes to stdout, or nowhere under --json.
  std::ostream& text() {
    static std::ostream null_stream(nullptr);
    return args_.json ? null_stream : std::cout;
  }

  // verify --replay SEED:INDEX: the INDEX-th generated case of that seed,
  // checked and printed like `check` does, with its case text.
  int Replay() {
    const std::string_view replay = args_.replay;
    const size_t colon = replay.find(':');
    uint64_t seed = 0;
    int64_t index = -1;
    if (colon == std::string_view::npos || !ParseWhole(replay.substr(0, colon), &seed) ||
        !ParseWhole(replay.substr(colon + 1), &index) || index < 0 ||
        index >= (int64_t{1} << 40)) {
      throw UsageError("--replay: SEED:INDEX (as in 'generated case INDEX (seed SEED)'), not '" +
                       args_.replay + "'");
    }
    sample::CaseSampler sampler(seed, producer_->Domain());
    for (int64_t i = 0; i < index; ++i) sampler.Next();
    const Case c = sampler.Next();
    const std::string source = GeneratedName(index, seed);
    const std::vector<check::CaseResult> results = check::RunCases({&c, 1}, *producer_);
    const CaseRecord record = MakeRecord(source, "generated", c, results[0], *producer_, true);
    if (!args_.junit.empty()) WriteJunit(args_.junit, "r3check-verify", {record});
    if (args_.json) {
      std::cout << RecordJson(record).dump(2) << "\n";
    } else {
      std::cout << check::VerdictText(source, results[0], *producer_)
                << check::DeviceLine(results[0].observation)
                << "--- case ---\n" << PrintCase(c) << "------------\n";
    }
    return results[0].PassesOrKnown() ? 0 : 1;
  }

  void SaveFailure(int64_t index, const Case& c, const check::CaseResult& result) {
    const std::string path = args_.save_failures + "/generated-seed" + std::to_string(args_.seed) +
                             "-case" + std::to_string(index) + ".r3case";
    const std::string headline = check::VerdictText("# verify", result, *producer_, 0);
    WriteOutputFile("--save-failures", path,
                    headline.substr(0, headline.find('\n')) + "\n# " +
                        GeneratedName(index, args_.seed) + "; again: r3check verify --replay " +
                        std::to_string(args_.seed) + ":" + std::to_string(index) +
                        VerdictFlags(args_.flags, args_.gpu) + "\n" + PrintCase(c));
  }

  void PrintJson() const {
    nlohmann::ordered_json j = {{"command", "verify"},
                                {"options", check::OptionsJson(*producer_)},
                                {"corpus", corpus_},
                                {"seed", args_.seed},
                                {"generated_cases", args_.cases}};
    const auto tally_json = [](const Tally& t) {
      return nlohmann::ordered_json{
          {"cases", t.cases}, {"pass", t.pass}, {"known", t.known}, {"fail", t.fail}};
    };
    nlohmann::ordered_json sources = nlohmann::ordered_json::object();
    for (const std::string& label : order_) sources[label] = tally_json(tallies_.at(label));
    j["sources"] = sources;
    j["total"] = tally_json(Total());
    j["known_findings"] = finding_counts_;
    j["failures"] = nlohmann::ordered_json::array();
    int64_t listed = 0;
    for (const CaseRecord& r : records_) {
      if (r.verdict != "fail") continue;
      if (args_.max_failures_given && listed >= args_.max_failures) continue;
      j["failures"].push_back(RecordJson(r));
      ++listed;
    }
    // Only with --max-failures given: the failures left out of the list.
    if (args_.max_failures_given) j["failures_not_listed"] = failures_ - listed;
    j["ok"] = failures_ == 0;
    std::cout << j.dump(2) << "\n";
  }

  // Counts, records and shows one judged case. index: the generated case's
  // number, -1 for a corpus file.
  void Record(const std::string& source, const std::string& label, const Case& c,
             const check::CaseResult& result, bool expect_finding, int64_t index) {
    Tally& tally = tallies_[label];
    ++tally.cases;
    for (const check::KnownFinding* f : result.explained) {
      if (f != nullptr) ++finding_counts_[std::string(f->id)];
    }
    const bool keep = args_.json || !args_.junit.empty();
    CaseRecord record;
    if (keep) record = MakeRecord(source, label, c, result, *producer_, /*listed=*/false);
    const CaseOutcome outcome = Classify(result, expect_finding);
    if (outcome == CaseOutcome::kFail) {
      ++tally.fail;
      ++failures_;
      if (Shown()) {
        shown_.push_back(check::VerdictText(source, result, *producer_) +
                         check::DeviceLine(result.observation) +
                         "--- case ---\n" + PrintCase(c) + "------------\n");
      }
      if (index >= 0 && !args_.save_failures.empty()) SaveFailure(index, c, result);
    } else if (outcome == CaseOutcome::kKnown) {
      ++tally.known;
    } else if (outcome == CaseOutcome::kFindingGone) {
      // A pinned finding that no longer fails: vLLM's behaviour changed.
      ++tally.fail;
      ++failures_;
      const std::string line = source + ": FAIL, the known finding no longer reproduces (" +
                               check::DescribeOptions(*producer_) + ")\n";
      if (Shown()) shown_.push_back(line);
      if (keep) {
        record = MakeRecord(source, label, c, result, *producer_, /*listed=*/true);
        record.verdict = "fail";
        record.text = line;
      }
    } else {
      ++tally.pass;
    }
    if (keep) records_.push_back(std::move(record));
  }

  // Judges a batch (the producer sees it as one request).
  // first_index: the first generated case's number, -1 for corpus files.
  void JudgeAll(const std::vector<std::string>& sources, const std::string& label,
                const std::vector<Case>& cases, bool expect_finding, int64_t first_index = -1) {
    std::vector<check::CaseResult> results = check::RunCases(cases, *producer_);
    for (size_t i = 0; i < cases.size(); ++i) {
      Record(sources[i], label, cases[i], results[i], expect_finding,
            first_index < 0 ? -1 : first_index + static_cast<int64_t>(i));
    }
    check::ReleaseResults(results);
  }

  // verify's cases in verify's order (cli/verify_cases.h): the corpus
  // folders, regressions first, then the generated cases.
  void RunAll(const CorpusFiles& files) {
    for (const std::string& label : VerifyLabels()) {
      order_.push_back(label);
      tallies_[label];
    }
    auto start = std::chrono::steady_clock::now();
    auto last_report = start;
    // The GPU path pays per batch (a wait, a dozen launches): it gets bigger
    // batches. Results come back in case order either way.
    ForEachVerifyBatch(files, args_.cases, args_.seed, args_.gpu.gpu ? 4096 : 256,
                       producer_->Domain(), [&](const CaseBatch& b) {
      if (!b.outside.empty()) {
        const std::string why = b.expect_finding ? "they pin findings in vLLM's code"
                                                 : "layouts " + producer_->Id() + " does not have";
        std::fprintf(stderr, "verify: %zu %s case(s) not run: %s (%s, ...)\n", b.outside.size(),
                     b.label.c_str(), why.c_str(), b.outside.front().c_str());
      }
      if (b.first_index == 0) start = last_report = std::chrono::steady_clock::now();
      JudgeAll(b.sources, b.label, b.cases, b.expect_finding, b.first_index);
      if (b.first_index < 0) return;
      const auto now = std::chrono::steady_clock::now();
      const int64_t done = b.first_index + static_cast<int64_t>(b.cases.size());
      // Progress when stderr is a terminal (or with --progress): a CI log
      // stays free of it unless asked.
      if (progress_ && now - last_report >= std::chrono::seconds(2) && done < args_.cases) {
        const double seconds = std::chrono::duration<double>(now - start).count();
        const double rate = static_cast<double>(done) / seconds;
        std::fprintf(stderr, "verify: %lld/%lld generated cases, %.0f cases/s, %.0f s left, %lld failing so far\n",
                     static_cast<long long>(done), static_cast<long long>(args_.cases), rate,
                     static_cast<double>(args_.cases - done) / rate,
                     static_cast<long long>(failures_));
        last_report = now;
      }
    });
    if (progress_ && args_.cases > 0) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "verify: %lld generated cases in %.1f s, %.0f cases/s, %lld failing\n",
                   static_cast<long long>(args_.cases), seconds,
                   static_cast<double>(args_.cases) / std::max(seconds, 1e-9),
                   static_cast<long long>(failures_));
    }
  }

  Tally Total() const {
    Tally total;
    for (const std::string& label : order_) total.Add(tallies_.at(label));
    return total;
  }

  void PrintSummary() {
    const Tally total = Total();
    char line[128];
    std::snprintf(line, sizeof line, "%-12s %8s %8s %8s %8s\n", "source", "cases", "pass", "known",
                  "fail");
    text() << line;
    for (const std::string& label : order_) {
      const Tally& t = tallies_.at(label);
      std::snprintf(line, sizeof line, "%-12s %8lld %8lld %8lld %8lld\n", label.c_str(),
                    static_cast<long long>(t.cases), static_cast<long long>(t.pass),
                    static_cast<long long>(t.known), static_cast<long long>(t.fail));
      text() << line;
    }
    std::snprintf(line, sizeof line, "%-12s %8lld %8lld %8lld %8lld\n", "total",
                  static_cast<long long>(total.cases), static_cast<long long>(total.pass),
                  static_cast<long long>(total.known), static_cast<long long>(total.fail));
    text() << line;
    if (!finding_counts_.empty()) {
      text() << "known-finding violations (see corpus/findings/):";
      for (const auto& [id, count] : finding_counts_) text() << " " << id << " x" << count;
      text() << "\n";
    }
    text() << (failures_ == 0 ? "verify: OK\n" : "verify: FAILED\n");
  }

  // Whether the failure being judged is printed in full (--max-failures).
  bool Shown() const { return static_cast<int64_t>(shown_.size()) < args_.max_failures; }

  // After the summary: the first --max-failures failures in full, then how
  // many more there were.
  void PrintFailures() {
    for (const std::string& failure : shown_) text() << "\n" << failure;
    const int64_t more = failures_ - static_cast<int64_t>(shown_.size());
    if (more <= 0) return;
    text() << "\n... and " << more << " more failure" << (more == 1 ? "" : "s");
    if (args_.save_failures.empty()) {
      text() << ": --save-failures DIR keeps every one";
    } else {
      text() << " (each generated one is in " << args_.save_failures << ")";
    }
    text() << "\n";
  }

  const VerifyArgs& args_;
  std::shared_ptr<sut::Producer> producer_;
  std::vector<std::string> shown_;  // the failures printed in full
  bool progress_ = args_.progress || isatty(STDERR_FILENO) == 1;
  std::string corpus_;
  std::vector<CaseRecord> records_;
  std::map<std::string, Tally> tallies_;
  std::vector<std::string> order_;
  std::map<std::string, int64_t> finding_counts_;
  int64_t failures_ = 0;
};

}  // namespace

void AddVerifyCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "the main job: the corpus (regressions first) plus N seeded generated cases");
  cmd->add_option("--cases", args->cases, "generated cases to check")
      ->transform(Decimal())
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--seed", args->seed, "seed of the case sampler")->check(Unsigned64());
  cmd->add_option("--corpus", args->corpus,
                  "corpus folder (default: $R3CHECK_CORPUS, else " + ShippedCorpusDir() + ")")
      ->check([](const std::string& v) { return v.empty() ? std::string("the path is empty (name a folder)") : ""; });
  cmd->add_flag("--json", args->json,
                "print one JSON document (counts per source, known findings, each failing case "
                "with its settings, case text and violations) instead of the text");
  cmd->add_option("--junit", args->junit, "also write JUnit XML to FILE (one testcase per case)")
      ->type_name("FILE");
  cmd->add_option("--save-failures", args->save_failures,
                  "write each failing generated case to DIR as an r3case file")
      ->type_name("DIR");
  cmd->add_option("--replay", args->replay,
                  "check only generated case INDEX of seed SEED (as a failure names it)")
      ->type_name("SEED:INDEX");
  CLI::Option* max_failures =
      cmd->add_option("--max-failures", args->max_failures,
                      "print at most N failures in full, after the summary, and count the rest (0: "
                      "none); with --json, list at most N (without it --json lists every one)")
          ->type_name("N")
          ->transform(Decimal())
          ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
          ->capture_default_str();
  cmd->add_flag("--progress", args->progress,
                "progress on stderr even when it is not a terminal (rate and time left)");
  args->flags.AddTo(*cmd);
  args->gpu.AddTo(*cmd);
  cmd->callback([args, exit_code, max_failures] {
    args->max_failures_given = max_failures->count() > 0;
    *exit_code = Verifier(*args, MakeProducer(args->flags, args->gpu)).Run();
  });
}

}  // namespace r3::cli
