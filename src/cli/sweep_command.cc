// r3check sweep SOURCE...: judge many versions of vLLM's capture code the
// way `verify --sut vllm:PATH` judges one (the corpus plus --cases generated
// cases, the first failure minimized), one line per version; --first-bad
// bisects a revision range for the commit that broke it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/first_bad.h"
#include "cli/gpu_flags.h"
#include "cli/number_flags.h"
#include "cli/sut_flags.h"
#include "cli/verify_cases.h"
#include "cli/version_files.h"
#include "cli/version_judge.h"
#include "cli/version_sources.h"
#include "r3/case/case_format.h"
#include "r3/case/checked_math.h"
#include "r3/engine/fork_server.h"
#include "r3/sut/producer.h"

namespace r3::cli {
namespace {

constexpr int64_t kMaxJobs = 256;

struct SweepArgs {
  std::vector<std::string> sources;
  int64_t cases = 300;
  uint64_t seed = 1;
  std::string corpus;
  bool json = false;
  bool first_bad = false;
  int64_t budget_ms = 10000;
  int64_t jobs = 0;  // 0: the number of cores
  bool no_fork_server = false;
  std::string engine = "vllm";
  SutFlags flags;
  CLI::Option* sut = nullptr;
};

// One version's line of the table.
struct Row {
  const Version* version = nullptr;
  std::string sha256;
  std::string same_as;  // the label of the earlier version with these contents
  VersionVerdict verdict;
};

std::string Describe(const Version& v) {
  if (!v.commit) return v.label;
  return v.label + " (" + v.commit->date + " " + v.commit->subject + ")";
}

// label  WORD  [same as X]  [invariants | reason]  [minimized: CASE]  sha256 H  interface V / I
std::string RowLine(const Row& row) {
  const VersionVerdict& v = row.verdict;
  std::string line = Describe(*row.version) + "  " + WordText(v.word);
  if (!row.same_as.empty()) line += "  same as " + row.same_as;
  if (v.word == VersionVerdict::Word::kError) {
    // Its first line (the engine layer may add a second, replay hints):
    // --json has all of it.
    line += "  " + v.error.substr(0, v.error.find('\n'));
  } else if (v.word == VersionVerdict::Word::kFail) {
    line += "  " + std::to_string(v.failing) + "/" + std::to_string(v.cases) + " cases";
    if (!v.invariants.empty()) line += "  " + InvariantNames(v.invariants);
    if (v.finding_gone) line += "  a known finding no longer fails";
    if (!v.minimized.empty()) line += "  minimized: " + v.minimized;
  } else {
    line += "  " + std::to_string(v.cases) + " cases";
  }
  line += "  sha256 " + row.sha256.substr(0, 12);
  line += "  interface " + v.engine_version + " / " + v.interface;
  return line;
}

nlohmann::ordered_json InvariantsJson(const std::vector<check::Invariant>& invariants) {
  nlohmann::ordered_json names = nlohmann::ordered_json::array();
  for (check::Invariant inv : invariants) names.push_back(InvariantNames({inv}));
  return names;
}

nlohmann::ordered_json CommitJson(const std::optional<Commit>& c) {
  if (!c) return nullptr;
  return {{"sha", c->sha}, {"date", c->date}, {"subject", c->subject}};
}

nlohmann::ordered_json RowJson(const Row& row) {
  const Version& ver = *row.version;
  const VersionVerdict& v = row.verdict;
  const auto or_null = [](const std::string& s) -> nlohmann::ordered_json {
    if (s.empty()) return nullptr;
    return s;
  };
  return {{"label", ver.label},
          {"kind", KindName(ver.kind)},
          {"source", ver.source},
          {"commit", CommitJson(ver.commit)},
          {"sha256", row.sha256},
          {"same_as", or_null(row.same_as)},
          {"verdict", WordText(v.word)},
          {"error", or_null(v.error)},
          {"engine_version", v.engine_version},
          {"interface", v.interface},
          {"cases", v.cases},
          {"failing_cases", v.failing},
          {"failing_invariants", InvariantsJson(v.invariants)},
          {"finding_gone", v.finding_gone},
          {"first_failure", or_null(v.first_failure)},
          {"minimized_case", or_null(v.minimized)},
          {"minimized_invariants", InvariantsJson(v.minimized_invariants)}};
}

// A verdict across the pipe from a --jobs worker, and back.
nlohmann::json VerdictToJson(const VersionVerdict& v) {
  const auto ints = [](const std::vector<check::Invariant>& invs) {
    std::vector<int> out;
    for (check::Invariant inv : invs) out.push_back(static_cast<int>(inv));
    return out;
  };
  return {{"word", static_cast<int>(v.word)},
          {"error", v.error},
          {"engine_version", v.engine_version},
          {"interface", v.interface},
          {"cases", v.cases},
          {"failing", v.failing},
          {"invariants", ints(v.invariants)},
          {"finding_gone", v.finding_gone},
          {"first_failure", v.first_failure},
          {"minimized", v.minimized},
          {"minimized_invariants", ints(v.minimized_invariants)}};
}

VersionVerdict VerdictFromJson(const nlohmann::json& j) {
  const auto invs = [](const nlohmann::json& a) {
    std::vector<check::Invariant> out;
    for (int x : a.get<std::vector<int>>()) out.push_back(static_cast<check::Invariant>(x));
    return out;
  };
  VersionVerdict v;
  v.word = static_cast<VersionVerdict::Word>(j.at("word").get<int>());
  v.error = j.at("error").get<std::string>();
  v.engine_version = j.at("engine_version").get<std::string>();
  v.interface = j.at("interface").get<std::string>();
  v.cases = j.at("cases").get<int64_t>();
  v.failing = j.at("failing").get<int64_t>();
  v.invariants = invs(j.at("invariants"));
  v.finding_gone = j.at("finding_gone").get<bool>();
  v.first_failure = j.at("first_failure").get<std::string>();
  v.minimized = j.at("minimized").get<std::string>();
  v.minimized_invariants = invs(j.at("minimized_invariants"));
  return v;
}

// What JudgeVersion threw in a worker, thrown again in the sweep's own
// process with its type (main.cc's exit status and message depend on it).
[[noreturn]] void Rethrow(const std::string& kind, const std::string& what) {
  if (kind == "usage") throw UsageError(what);
  if (kind == "case") throw CaseFormatError(what);
  if (kind == "engine") throw sut::ExternalSutError(what);
  if (kind == "overflow") throw OverflowError(what);
  throw std::runtime_error(what);
}

// JudgeVersion in the worker: one JSON document, {"verdict": ...} or
// {"throw": kind, "what": message}.
std::string JudgeInWorker(const std::string& sut_path, const JudgeSettings& settings) {
  nlohmann::json out;
  try {
    out["verdict"] = VerdictToJson(JudgeVersion(sut_path, settings));
  } catch (const UsageError& e) {
    out = {{"throw", "usage"}, {"what", e.what()}};
  } catch (const CaseFormatError& e) {
    out = {{"throw", "case"}, {"what", e.what()}};
  } catch (const sut::ExternalSutError& e) {
    out = {{"throw", "engine"}, {"what", e.what()}};
  } catch (const OverflowError& e) {
    out = {{"throw", "overflow"}, {"what", e.what()}};
  } catch (const std::exception& e) {
    out = {{"throw", "other"}, {"what", e.what()}};
  }
  return out.dump();
}

int64_t DefaultJobs() {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores < 1 ? 1 : cores;
}

class Sweeper {
 public:
  explicit Sweeper(const SweepArgs& args) : args_(args) {}

  int Run() {
    if (args_.sut->count() > 0) {
      throw UsageError("sweep: --sut does not apply: the SOURCEs are the versions to judge");
    }
    if (args_.first_bad && args_.sources.size() != 1) {
      throw UsageError("--first-bad: takes one CHECKOUT@A..B source, not " +
                       std::to_string(args_.sources.size()));
    }
    if (args_.budget_ms < 1) throw UsageError("--budget-ms: must be at least 1");
    // A bigger budget overflows the deadline (as for minimize).
    if (args_.budget_ms > 86'400'000) throw UsageError("--budget-ms: must be at most 86400000 (a day)");
    // Every flag checked once, before any version: a bad flag is exit 2,
    // not an ERROR line per version.
    SutFlags probe = args_.flags;
    probe.sut = args_.engine + ":installed";
    engine::EngineSpec unused;
    (void)probe.Options(&unused);
    RejectGpuOnlyMutants(/*gpu_path=*/false, args_.flags);
    settings_.flags = args_.flags;
    settings_.engine = args_.engine;
    settings_.corpus = ListVerifyCorpus(ResolveVerifyCorpus(args_.corpus));
    settings_.cases = args_.cases;
    settings_.seed = args_.seed;
    settings_.budget_ms = args_.budget_ms;
    for (const std::string& source : args_.sources) {
      try {
        ExpandedSource e = ExpandSource(source);
        for (Version& v : e.versions) versions_.push_back(std::move(v));
        range_start_ = std::move(e.range_start);
      } catch (const SourceError& e) {
        throw UsageError(e.what());
      }
    }
    // One Python process imports torch and forks every version's adapter
    // (engine/fork_server.h); without it, each adapter imports torch itself.
    if (!args_.no_fork_server && args_.engine == "vllm") {  // the fork server is vLLM's
      fork_server_ = engine::ForkServer::Start(args_.flags.Launch());
      if (fork_server_) settings_.flags.fork_server = fork_server_->socket();
    }
    if (args_.first_bad) {
      if (!range_start_) {
        throw UsageError("--first-bad: takes a CHECKOUT@A..B source, not " + args_.sources[0]);
      }
      return FirstBad();
    }
    const int64_t jobs = args_.jobs == 0 ? DefaultJobs() : args_.jobs;
    if (jobs <= 1 || versions_.size() <= 1) {
      for (size_t i = 0; i < versions_.size(); ++i) {
        Progress(std::to_string(i + 1) + "/" + std::to_string(versions_.size()) + " " +
                 versions_[i].label);
        Judge(versions_[i]);
      }
    } else {
      JudgeInParallel(static_cast<size_t>(jobs));
    }
    return Finish();
  }

 private:
  void Progress(const std::string& what) const {
    if (tty_ && !what.empty()) std::fprintf(stderr, "sweep: %s\n", what.c_str());
  }

  // Judges `version` (once per content) and prints its line.
  const Row& Judge(const Version& version) {
    Row row;
    row.version = &version;
    VersionFiles files;
    try {
      files = MaterializeVersion(version);
    } catch (const SourceError& e) {
      throw UsageError(e.what());
    }
    row.sha256 = files.sha256;
    const auto seen = seen_.find(files.sha256);
    if (!files.error.empty()) {
      row.verdict.word = VersionVerdict::Word::kError;
      row.verdict.error = files.error;
    } else if (seen != seen_.end()) {
      row.same_as = rows_[seen->second].version->label;
      row.verdict = rows_[seen->second].verdict;
    } else {
      row.verdict = JudgeVersion(files.sut_path, settings_);
      seen_[files.sha256] = rows_.size();
      ++judged_;
    }
    rows_.push_back(std::move(row));
    if (!args_.json) std::cout << RowLine(rows_.back()) << "\n" << std::flush;
    return rows_.back();
  }

  // --jobs N: versions judged by N worker processes (fork()ed: r3check is
  // single-threaded, and each worker starts its own adapter), lines printed
  // in version order as soon as every earlier one is known, so the output
  // is the bytes of --jobs 1. Versions are materialized and hashed here, in
  // order, as they are handed out: a copy waits for the version it copies.
  // A worker's thrown error (an unreadable corpus file) stops the sweep
  // after the lines before that version, as --jobs 1 would.
  struct Slot {
    size_t index = 0;
    pid_t pid = -1;
    int fd = -1;
    std::string data;
  };

  void JudgeInParallel(size_t jobs) {
    const size_t n = versions_.size();
    std::vector<Row> rows(n);
    std::vector<bool> known(n, false);
    std::vector<VersionFiles> files(n);
    std::vector<size_t> origin(n, SIZE_MAX);  // a copy's earlier version
    std::map<std::string, size_t> first_with;  // sha256 -> version index
    std::vector<Slot> running;
    size_t next = 0, printed = 0;
    std::optional<size_t> stop_at;  // a version whose judging threw
    std::string stop_kind, stop_what;
    std::optional<UsageError> source_error;
    const auto reap_all = [&] {
      for (Slot& slot : running) {
        kill(slot.pid, SIGTERM);
        close(slot.fd);
        int status = 0;
        waitpid(slot.pid, &status, 0);
      }
      running.clear();
    };
    try {
      while (printed < n) {
        while (!source_error && !stop_at && next < n && running.size() < jobs) {
          const size_t i = next++;
          Progress(std::to_string(i + 1) + "/" + std::to_string(n) + " " + versions_[i].label);
          rows[i].version = &versions_[i];
          try {
            files[i] = MaterializeVersion(versions_[i]);
          } catch (const SourceError& e) {
            source_error.emplace(e.what());
            next = i;  // versions from here on are not judged
            break;
          }
          rows[i].sha256 = files[i].sha256;
          const auto seen = first_with.find(files[i].sha256);
          if (!files[i].error.empty()) {
            rows[i].verdict.word = VersionVerdict::Word::kError;
            rows[i].verdict.error = files[i].error;
            known[i] = true;
          } else if (seen != first_with.end()) {
            origin[i] = seen->second;
            rows[i].same_as = versions_[seen->second].label;
          } else {
            first_with[files[i].sha256] = i;
            running.push_back(StartWorker(i, files[i].sut_path));
          }
        }
        // Copies take their version's verdict once it is known.
        for (size_t i = printed; i < next; ++i) {
          if (!known[i] && origin[i] != SIZE_MAX && known[origin[i]]) {
            rows[i].verdict = rows[origin[i]].verdict;
            known[i] = true;
          }
        }
        while (printed < next && known[printed]) {
          rows_.push_back(rows[printed]);
          // As Judge() counts: a version whose contents were judged here.
          if (rows[printed].same_as.empty() && files[printed].error.empty()) ++judged_;
          if (!args_.json) std::cout << RowLine(rows_.back()) << "\n" << std::flush;
          files[printed] = VersionFiles();  // a revision's folder removed
          ++printed;
        }
        if (stop_at && printed == *stop_at) {
          reap_all();
          Rethrow(stop_kind, stop_what);
        }
        if (running.empty()) {
          if (source_error && printed == next) throw *source_error;
          if (printed == n) break;
          continue;  // only copies left: resolved above
        }
        const size_t done = WaitForOne(&running);
        Slot slot = std::move(running[done]);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(done));
        nlohmann::json reply = nlohmann::json::parse(slot.data, nullptr, /*allow_exceptions=*/false);
        if (reply.is_object() && reply.contains("verdict")) {
          rows[slot.index].verdict = VerdictFromJson(reply["verdict"]);
          known[slot.index] = true;
        } else {
          const bool thrown = reply.is_object() && reply.contains("throw");
          const std::string kind = thrown ? reply["throw"].get<std::string>() : "other";
          const std::string what =
              thrown ? reply["what"].get<std::string>()
                     : "sweep: the worker judging " + versions_[slot.index].label +
                           " ended without a verdict";
          if (!stop_at || slot.index < *stop_at) {
            stop_at = slot.index;
            stop_kind = kind;
            stop_what = what;
          }
        }
      }
    } catch (...) {
      reap_all();
      throw;
    }
  }

  Slot StartWorker(size_t index, const std::string& sut_path) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      throw std::runtime_error(std::string("sweep --jobs: pipe: ") + std::strerror(errno));
    }
    std::cout.flush();
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      throw std::runtime_error(std::string("sweep --jobs: fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      close(fds[0]);
      if (fork_server_) fork_server_->Release();
      std::string out;
      try {
        out = JudgeInWorker(sut_path, settings_);
      } catch (...) {
        out = "{}";
      }
      const char* p = out.data();
      size_t left = out.size();
      while (left > 0) {
        const ssize_t w = write(fds[1], p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        p += w;
        left -= static_cast<size_t>(w);
      }
      _exit(0);
    }
    close(fds[1]);
    Slot slot;
    slot.index = index;
    slot.pid = pid;
    slot.fd = fds[0];
    return slot;
  }

  // Reads the workers' pipes until one reaches end of file; returns its
  // position in `running` (its process reaped, its fd closed).
  static size_t WaitForOne(std::vector<Slot>* running) {
    std::vector<pollfd> fds(running->size());
    while (true) {
      for (size_t k = 0; k < running->size(); ++k) fds[k] = {(*running)[k].fd, POLLIN, 0};
      if (poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("sweep --jobs: poll: ") + std::strerror(errno));
      }
      for (size_t k = 0; k < running->size(); ++k) {
        if (fds[k].revents == 0) continue;
        Slot& slot = (*running)[k];
        char buf[65536];
        const ssize_t got = read(slot.fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got > 0) {
          slot.data.append(buf, static_cast<size_t>(got));
          continue;
        }
        close(slot.fd);
        int status = 0;
        while (waitpid(slot.pid, &status, 0) < 0 && errno == EINTR) {
        }
        return k;
      }
    }
  }

  int ExitCode() const {
    bool fail = false, error = false;
    for (const Row& r : rows_) {
      fail = fail || r.verdict.word == VersionVerdict::Word::kFail;
      error = error || r.verdict.word == VersionVerdict::Word::kError;
    }
    return error ? 2 : fail ? 1 : 0;
  }

  nlohmann::ordered_json Summary() const {
    int64_t pass = 0, fail = 0, error = 0;
    for (const Row& r : rows_) {
      pass += r.verdict.word == VersionVerdict::Word::kPass;
      fail += r.verdict.word == VersionVerdict::Word::kFail;
      error += r.verdict.word == VersionVerdict::Word::kError;
    }
    return {{"versions", rows_.size()}, {"judged", judged_}, {"pass", pass}, {"fail", fail},
            {"error", error}};
  }

  std::string SummaryLine() const {
    const nlohmann::ordered_json s = Summary();
    const int64_t versions = s["versions"], judged = s["judged"];
    std::string line = "sweep: " + std::to_string(versions) + " version(s), " +
                       std::to_string(judged) + " judged";
    int64_t copies = 0;
    for (const Row& r : rows_) copies += !r.same_as.empty();
    if (copies > 0) line += " (" + std::to_string(copies) + " same as an earlier one)";
    line += ": " + std::to_string(s["pass"].get<int64_t>()) + " PASS, " +
            std::to_string(s["fail"].get<int64_t>()) + " FAIL, " +
            std::to_string(s["error"].get<int64_t>()) + " ERROR";
    return line;
  }

  nlohmann::ordered_json Document() const {
    nlohmann::ordered_json j = {{"command", "sweep"},
                                {"sources", args_.sources},
                                {"policy", args_.flags.policy},
                                {"mutants", args_.flags.mutants},
                                {"engine_device", args_.flags.engine_device},
                                {"corpus", ResolveVerifyCorpus(args_.corpus)},
                                {"seed", args_.seed},
                                {"generated_cases", args_.cases}};
    j["versions"] = nlohmann::ordered_json::array();
    for (const Row& r : rows_) j["versions"].push_back(RowJson(r));
    return j;
  }

  int Finish() {
    const int code = ExitCode();
    if (args_.json) {
      nlohmann::ordered_json j = Document();
      j["summary"] = Summary();
      j["exit_status"] = code;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << SummaryLine() << "\n";
    }
    return code;
  }

  int FirstBad() {
    const int64_t n = static_cast<int64_t>(versions_.size());
    std::map<int64_t, VersionVerdict::Word> words;
    const Bisection b = FindFirstBad(n, [&](int64_t i) {
      const Version& v = i < 0 ? *range_start_ : versions_[static_cast<size_t>(i)];
      Progress("bisect: " + Describe(v));
      switch (Judge(v).verdict.word) {
        case VersionVerdict::Word::kPass:
          return Judged::kPass;
        case VersionVerdict::Word::kFail:
          return Judged::kFail;
        case VersionVerdict::Word::kError:
          break;
      }
      return Judged::kError;
    });
    const Version& start = *range_start_;
    const Version& end = versions_.back();
    const auto at = [&](int64_t i) -> const Version& {
      return i < 0 ? start : versions_[static_cast<size_t>(i)];
    };
    std::string answer;
    int code = 2;
    switch (b.outcome) {
      case Bisection::Outcome::kFound:
        answer = "first bad: " + at(b.first_bad).commit->sha + " " + at(b.first_bad).commit->subject;
        code = 1;
        break;
      case Bisection::Outcome::kEndPasses:
        answer = "first bad: none: the range's end " + end.label + " passes (nothing to look for)";
        code = 0;
        break;
      case Bisection::Outcome::kStartFails:
        answer = "first bad: at or before the range's start: " + start.label +
                 " already fails (the assumption is that it passes)";
        code = 1;
        break;
      case Bisection::Outcome::kUndecided: {
        answer = "first bad: undecided: ";
        std::string names;
        for (int64_t i : b.unjudged) names += (names.empty() ? "" : ", ") + at(i).label;
        answer += names + " could not be judged";
        if (b.first_bad >= 0 && !b.unjudged.empty() && b.unjudged[0] != -1 &&
            b.unjudged[0] != n - 1) {
          answer += "; the first bad commit is one of them or " + at(b.first_bad).label;
        }
        code = 2;
        break;
      }
    }
    const std::string judged_line =
        "sweep --first-bad: " + std::to_string(n) + " commit(s) in " + args_.sources[0] +
        " touch the capture or sizing code; judged " + std::to_string(b.judged.size()) +
        " (the range's start " + start.commit->sha.substr(0, 10) +
        " included), assuming the start passes and the end fails";
    if (args_.json) {
      nlohmann::ordered_json j = Document();
      nlohmann::ordered_json fb = {
          {"assumption", "the range's start passes and its end fails"},
          {"outcome", OutcomeName(b.outcome)},
          {"range_start", CommitJson(start.commit)},
          {"range_commits", n},
          {"judged", nlohmann::ordered_json::array()},
          {"commit", b.outcome == Bisection::Outcome::kFound ? CommitJson(at(b.first_bad).commit)
                                                             : nullptr},
          {"last_good", b.outcome == Bisection::Outcome::kFound
                            ? CommitJson(at(b.last_good).commit)
                            : nullptr}};
      for (int64_t i : b.judged) fb["judged"].push_back(at(i).commit->sha);
      j["first_bad"] = fb;
      j["summary"] = Summary();
      j["exit_status"] = code;
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << answer << "\n" << judged_line << "\n";
    }
    return code;
  }

  const SweepArgs& args_;
  std::unique_ptr<engine::ForkServer> fork_server_;
  JudgeSettings settings_;
  std::vector<Version> versions_;
  std::optional<Version> range_start_;
  std::vector<Row> rows_;
  std::map<std::string, size_t> seen_;  // sha256 -> the row that judged it
  int64_t judged_ = 0;
  bool tty_ = isatty(STDERR_FILENO) == 1;
};

}  // namespace

void AddSweepCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "judge many versions of vLLM's capture code (files, folders, checkouts, "
               "CHECKOUT@REV, CHECKOUT@A..B), one line each; --first-bad bisects a range");
  cmd->add_option("SOURCE", args->sources,
                  "a routed_experts_capturer.py, a folder of them, a checkout, CHECKOUT@REV or "
                  "CHECKOUT@A..B (the commits in A..B that touched the capture or sizing code)")
      ->required();
  cmd->add_option("--engine", args->engine, "the engine the SOURCEs are versions of")
      ->check(CLI::IsMember({"vllm", "sglang", "vllm-ascend"}));
  cmd->add_option("--cases", args->cases, "generated cases per version (after the corpus)")
      ->transform(Decimal())
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  cmd->add_option("--seed", args->seed, "seed of the case sampler")->check(Unsigned64());
  cmd->add_option("--corpus", args->corpus, "corpus folder (as verify's)");
  cmd->add_flag("--json", args->json, "print one JSON document instead of the table");
  cmd->add_flag("--first-bad", args->first_bad,
                "with one CHECKOUT@A..B: bisect for the oldest failing commit after the newest "
                "passing one (assumes A passes and B fails)");
  cmd->add_option("--budget-ms", args->budget_ms,
                  "time budget for minimizing each version's first failure")
      ->transform(Decimal());
  cmd->add_option("--jobs", args->jobs,
                  "versions judged at once, each by its own adapter process (default 0: one per "
                  "core); the output is the same for every N. --first-bad judges one at a time")
      ->transform(Decimal())
      ->check(CLI::Range(int64_t{0}, kMaxJobs));
  cmd->add_flag("--no-fork-server", args->no_fork_server,
                "exec every version's adapter (each imports torch) instead of forking it from "
                "one Python process that imported torch once; the output is the same");
  args->flags.AddTo(*cmd);
  args->sut = cmd->get_option("--sut");
  cmd->callback([args, exit_code] { *exit_code = Sweeper(*args).Run(); });
}

}  // namespace r3::cli
