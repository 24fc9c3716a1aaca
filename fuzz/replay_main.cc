// A standalone driver for a libFuzzer target, for builds without libFuzzer
// (GCC in ordinary CI): feeds every file named on the command line, or
// found directly inside a named folder, to LLVMFuzzerTestOneInput.
//
//   replay [--require-valid | --list-invalid | --expect-kill |
//           --expect=FILE | --update-expect=FILE]
//          [--sut=NAME] [--mutant=NAME[,NAME]] [--policy=NAME] [--producer=host|gpu] PATH...
//
// Exit status, so that a test can tell the failure it wants from any other:
//   0  every input ran as asked (with --expect-kill: the target reported a
//      finding, i.e. the expected kill happened);
//   1  a finding (the target aborted on an unexplained violation), an input
//      rejected under --require-valid, no kill under --expect-kill, or an
//      accept/reject verdict that differs from the expectations file;
//   2  usage: an unknown flag, SUT, mutant or policy name, a path that does
//      not exist or cannot be read, no inputs;
//   3  the target crashed some other way (an abort that is not a finding,
//      e.g. an uncaught exception), or returned a value libFuzzer does not
//      define (only 0, and -1 for "reject", exist).
//
// --require-valid fails when the target rejects an input: seed and
// regression corpora hold valid cases only. --list-invalid prints the
// rejected files' paths, one a line, and nothing else: libFuzzer's merge
// keeps rejected inputs that add parser coverage, and the overnight driver
// drops them with it. --expect=FILE checks each input's verdict against
// FILE's "<file name> accept|reject" lines (every input listed, every line
// an input); --update-expect=FILE adds the missing lines and never changes
// a recorded one.
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "fuzz/replay_hooks.h"

#ifdef R3_REPLAY_GCOV_DUMP
// libgcov (a -Db_coverage=true build): writes the counters now; _exit below
// skips the exit handler that would, and the lines a target ran before it
// aborted would count as never run (scripts/mutate.py --collect-coverage).
extern "C" void __gcov_dump();
#endif

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;
constexpr int kCrash = 3;

char g_current[4096] = "";
volatile std::sig_atomic_t g_expect_kill = 0;

void Say(const char* text) { (void)!write(2, text, std::strlen(text)); }

[[noreturn]] void Exit(int status) {
#ifdef R3_REPLAY_GCOV_DUMP
  __gcov_dump();
#endif
  _exit(status);
}

void OnAbort(int /*signal*/) {
  // Only async-signal-safe calls here.
  const bool finding = &r3_fuzz_finding != nullptr && r3_fuzz_finding != 0;
  if (!finding) {
    Say("replay: target crashed (an abort that is not a finding) on ");
    Say(g_current);
    Say("\n");
    Exit(kCrash);
  }
  Say(g_expect_kill ? "replay: expected kill: the target reported a finding on "
                    : "replay: target aborted on a finding in ");
  Say(g_current);
  Say("\n");
  Exit(g_expect_kill ? kOk : kFailed);
}

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "replay: %s\nusage: replay [--require-valid | --list-invalid | --expect-kill | "
               "--expect=FILE | --update-expect=FILE] [--sut=|--mutant=|--policy=|--producer=] PATH...\n",
               why.c_str());
  std::exit(kUsage);
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::vector<std::string> Inputs(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      std::vector<std::string> inside;
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') {
          inside.push_back(entry.path().string());
        }
      }
      std::sort(inside.begin(), inside.end());
      files.insert(files.end(), inside.begin(), inside.end());
    } else if (std::filesystem::exists(path, ec)) {
      files.push_back(path);
    } else {
      Usage("no such file or directory: " + path);
    }
  }
  return files;
}

// "<file name> accept|reject" per line; '#' starts a comment.
std::map<std::string, std::string> ReadExpectations(const std::string& path, bool must_exist) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) {
    if (must_exist) Usage("cannot read the expectations file " + path);
    return out;
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name, verdict, extra;
    fields >> name >> verdict;
    if (name.empty() || (verdict != "accept" && verdict != "reject") || (fields >> extra)) {
      Usage(path + ":" + std::to_string(number) + ": expected '<file name> accept|reject'");
    }
    if (!out.emplace(name, verdict).second) {
      Usage(path + ":" + std::to_string(number) + ": " + name + " is listed twice");
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool require_valid = false;
  bool list_invalid = false;
  std::string expect_path;
  std::string update_path;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--require-valid") {
      require_valid = true;
    } else if (arg == "--list-invalid") {
      list_invalid = true;
    } else if (arg == "--expect-kill") {
      g_expect_kill = 1;
    } else if (StartsWith(arg, "--expect=")) {
      expect_path = arg.substr(9);
    } else if (StartsWith(arg, "--update-expect=")) {
      update_path = arg.substr(16);
    } else if (StartsWith(arg, "--sut=") || StartsWith(arg, "--mutant=") ||
               StartsWith(arg, "--policy=") || StartsWith(arg, "--producer=")) {
      continue;  // read by LLVMFuzzerInitialize (unknown names exit 2 there)
    } else if (StartsWith(arg, "-")) {
      Usage("unknown flag " + arg);
    } else {
      paths.push_back(arg);
    }
  }
  const int modes = (require_valid ? 1 : 0) + (list_invalid ? 1 : 0) + (g_expect_kill ? 1 : 0) +
                    (expect_path.empty() ? 0 : 1) + (update_path.empty() ? 0 : 1);
  if (modes > 1) Usage("the mode flags exclude each other");
  if (paths.empty()) Usage("no inputs");
  const std::vector<std::string> files = Inputs(paths);
  std::signal(SIGABRT, OnAbort);
  LLVMFuzzerInitialize(&argc, &argv);

  const bool expectations = !expect_path.empty() || !update_path.empty();
  std::map<std::string, std::string> expected;
  if (expectations) {
    expected = expect_path.empty() ? ReadExpectations(update_path, /*must_exist=*/false)
                                   : ReadExpectations(expect_path, /*must_exist=*/true);
  }
  std::map<std::string, std::string> observed;
  int rejected = 0;
  for (const std::string& file : files) {
    std::snprintf(g_current, sizeof(g_current), "%s", file.c_str());
    std::ifstream in(file, std::ios::binary);
    if (!in) Usage("cannot read " + file);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (&r3_fuzz_rejected != nullptr) r3_fuzz_rejected = 0;
    const int rc =
        LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (rc != 0 && rc != -1) {
      std::fprintf(stderr, "replay: the target returned %d on %s; libFuzzer defines only 0 and -1 "
                   "(reject)\n", rc, file.c_str());
      return kCrash;
    }
    const bool is_rejected = rc == -1 || (&r3_fuzz_rejected != nullptr && r3_fuzz_rejected != 0);
    if (is_rejected) {
      ++rejected;
      if (require_valid) std::fprintf(stderr, "replay: %s: rejected as invalid\n", file.c_str());
      if (list_invalid) std::printf("%s\n", file.c_str());
    }
    if (expectations) {
      const std::string name = std::filesystem::path(file).filename().string();
      if (!observed.emplace(name, is_rejected ? "reject" : "accept").second) {
        Usage("two inputs are named " + name + "; expectations go by file name");
      }
    }
  }
  if (list_invalid) return kOk;
  std::printf("replayed %zu inputs, %d rejected as invalid\n", files.size(), rejected);
  if (g_expect_kill) {
    std::fprintf(stderr, "replay: expected a kill, but no input of %zu made the target report a "
                 "finding\n", files.size());
    return kFailed;
  }
  if (expectations) {
    int wrong = 0;
    int added = 0;
    for (const auto& [name, verdict] : observed) {
      const auto it = expected.find(name);
      if (it == expected.end()) {
        if (!update_path.empty()) {
          expected.emplace(name, verdict);
          ++added;
          continue;
        }
        std::fprintf(stderr, "replay: %s: no expectation in %s (the parser says %s; add it with "
                     "--update-expect=%s)\n", name.c_str(), expect_path.c_str(), verdict.c_str(),
                     expect_path.c_str());
        ++wrong;
      } else if (it->second != verdict) {
        std::fprintf(stderr, "replay: %s: expected %s, the target now says %s\n", name.c_str(),
                     it->second.c_str(), verdict.c_str());
        ++wrong;
      }
    }
    for (const auto& [name, verdict] : expected) {
      if (observed.count(name) == 0 && update_path.empty()) {
        std::fprintf(stderr, "replay: %s lists %s, which is not among the inputs\n",
                     expect_path.c_str(), name.c_str());
        ++wrong;
      }
    }
    if (!update_path.empty()) {
      std::ofstream out(update_path, std::ios::trunc);
      out << "# Expected verdict of each input: accept | reject (fuzz/replay_main.cc "
             "--expect).\n";
      for (const auto& [name, verdict] : expected) out << name << ' ' << verdict << '\n';
      if (!out.flush()) Usage("cannot write " + update_path);
      std::printf("%s: %d expectation(s) added, %zu in all\n", update_path.c_str(), added,
                  expected.size());
    }
    if (wrong > 0) return kFailed;
  }
  return require_valid && rejected > 0 ? kFailed : kOk;
}
