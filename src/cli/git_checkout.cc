#include "cli/git_checkout.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <utility>

#include "cli/run_program.h"

namespace r3::cli {
namespace {

// Fields of a log line, separated by the ASCII unit separator (no subject
// holds one).
constexpr const char* kLogFormat = "--format=%H%x1f%cd%x1f%s";

std::vector<Commit> ParseLog(const std::string& out) {
  std::vector<Commit> commits;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const size_t a = line.find('\x1f');
    const size_t b = a == std::string::npos ? a : line.find('\x1f', a + 1);
    if (b == std::string::npos) throw GitError("git log printed an unexpected line: " + line);
    commits.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return commits;
}

}  // namespace

GitCheckout::GitCheckout(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir_, ec)) throw GitError(dir_ + " is not a folder");
  const ProgramResult top = RunProgram({"git", "-C", dir_, "rev-parse", "--show-toplevel"});
  if (!top.ok()) {
    throw GitError(dir_ + " is not a git checkout (git: " + top.FirstErrorLine() + ")");
  }
  std::string root = top.out;
  while (!root.empty() && (root.back() == '\n' || root.back() == '\r')) root.pop_back();
  if (!std::filesystem::equivalent(root, dir_, ec)) {
    throw GitError(dir_ + " is not the top of a git checkout (its repository is " + root + ")");
  }
}

std::string GitCheckout::Git(std::vector<std::string> args) const {
  args.insert(args.begin(), {"git", "-C", dir_});
  const ProgramResult r = RunProgram(args);
  if (!r.ok()) throw GitError("git " + args[3] + " failed: " + r.FirstErrorLine());
  return r.out;
}

Commit GitCheckout::Resolve(const std::string& rev) const {
  const ProgramResult r = RunProgram(
      {"git", "-C", dir_, "rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
  if (!r.ok() || rev.empty()) throw GitError("no commit '" + rev + "' in " + dir_);
  std::string sha = r.out.substr(0, r.out.find('\n'));
  const std::vector<Commit> commits =
      ParseLog(Git({"log", "-1", "--date=short", kLogFormat, sha, "--"}));
  if (commits.size() != 1) throw GitError("git log " + sha + " printed no commit");
  return commits[0];
}

std::vector<Commit> GitCheckout::Touching(const Commit& from, const Commit& to,
                                          const std::vector<std::string>& paths) const {
  std::vector<std::string> args = {"log", "--reverse", "--date=short", kLogFormat,
                                   from.sha + ".." + to.sha, "--"};
  args.insert(args.end(), paths.begin(), paths.end());
  return ParseLog(Git(args));
}

std::vector<std::string> GitCheckout::PathsAt(const Commit& commit,
                                              const std::vector<std::string>& paths) const {
  std::vector<std::string> args = {"ls-tree", "-r", "-z", "--name-only", commit.sha, "--"};
  args.insert(args.end(), paths.begin(), paths.end());
  const std::string out = Git(args);
  std::vector<std::string> listed;
  for (size_t start = 0; start < out.size();) {
    const size_t end = std::min(out.find('\0', start), out.size());
    listed.push_back(out.substr(start, end - start));
    start = end + 1;
  }
  std::vector<std::string> present;
  for (const std::string& p : paths) {
    if (std::find(listed.begin(), listed.end(), p) != listed.end()) present.push_back(p);
  }
  return present;
}

std::string GitCheckout::Read(const Commit& commit, const std::string& path) const {
  return Git({"cat-file", "blob", commit.sha + ":" + path});
}

}  // namespace r3::cli
