// Reading a git checkout's history through the git program (argument
// vectors, no shell): commits, the commits that touched some paths, and the
// files of a commit. For `sweep CHECKOUT@REV` and `CHECKOUT@A..B`.
#ifndef R3_CLI_GIT_CHECKOUT_H_
#define R3_CLI_GIT_CHECKOUT_H_

#include <stdexcept>
#include <string>
#include <vector>

namespace r3::cli {

// What git said when it failed, one line (no source name: the caller adds it).
class GitError : public std::runtime_error {
 public:
  explicit GitError(const std::string& what) : std::runtime_error(what) {}
};

struct Commit {
  std::string sha;      // 40 hex digits
  std::string date;     // committer date, YYYY-MM-DD
  std::string subject;  // the first line of the message
};

class GitCheckout {
 public:
  // `dir` must be the top folder of a git work tree (not a folder inside
  // one, where paths would not be the checkout's). Throws GitError.
  explicit GitCheckout(std::string dir);

  // REV as a commit. Throws GitError ("no commit 'REV' in DIR").
  Commit Resolve(const std::string& rev) const;

  // The commits in from..to (git log from..to: reachable from `to`, not from
  // `from`) that changed any of `paths`, oldest first.
  std::vector<Commit> Touching(const Commit& from, const Commit& to,
                               const std::vector<std::string>& paths) const;

  // Which of `paths` exist at `commit`, in the order given.
  std::vector<std::string> PathsAt(const Commit& commit,
                                   const std::vector<std::string>& paths) const;

  // The bytes of `path` at `commit`.
  std::string Read(const Commit& commit, const std::string& path) const;

  const std::string& dir() const { return dir_; }

 private:
  std::string Git(std::vector<std::string> args) const;

  std::string dir_;
};

}  // namespace r3::cli

#endif  // R3_CLI_GIT_CHECKOUT_H_
