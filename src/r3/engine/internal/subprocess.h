// A child process spoken to in lines over its stdin and stdout, with a
// deadline on every read and write: a dead or hung adapter becomes an error,
// never a blocked r3check. Its stderr is the user's.
#ifndef R3_ENGINE_INTERNAL_SUBPROCESS_H_
#define R3_ENGINE_INTERNAL_SUBPROCESS_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace r3::engine::internal {

class SubprocessError : public std::runtime_error {
 public:
  explicit SubprocessError(const std::string& what) : std::runtime_error(what) {}
};

class Subprocess {
 public:
  // Starts argv[0] (searched on PATH) in a process group of its own, so that
  // everything it starts (torchrun's workers) is stopped with it.
  // exit_grace_ms: how long the child may take to exit once its stdin is
  // closed before it is stopped (a launcher such as torchrun waits for its
  // workers and for the other nodes' agents first).
  // fork_server: a fork server's socket (fork_server.h): the child asks it
  // to fork argv (a Python adapter) instead of exec'ing it, and stands in for
  // it (fork_client.h); it execs argv itself when the fork server does not
  // take it. Everything here (pipes, group, signals, status) is the same.
  explicit Subprocess(const std::vector<std::string>& argv, int64_t exit_grace_ms = 500,
                      const std::string& fork_server = "");
  ~Subprocess();  // closes stdin, waits exit_grace_ms, then stops the group
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // False when the child has closed its input (it exited, or will not read
  // more); the caller then reads what it said last. Throws SubprocessError
  // when the deadline passes or the write fails otherwise.
  [[nodiscard]] bool WriteLine(const std::string& line, int64_t timeout_ms);
  // The next line without its newline; nullopt when the child closed stdout.
  // Throws SubprocessError on timeout or a line over max_line_bytes.
  std::optional<std::string> ReadLine(int64_t timeout_ms, size_t max_line_bytes);

  // "exited with status 1", "killed by signal 9", or "still running".
  std::string Status();
  // Status(), after waiting up to wait_ms for a child that closed its
  // output to finish exiting (it closes its pipes a moment before).
  std::string StatusAfterExit(int64_t wait_ms);

 private:
  void Stop();

  int64_t exit_grace_ms_;

  int pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;  // bytes read past the last returned line
  bool exited_ = false;
  int wait_status_ = 0;
};

}  // namespace r3::engine::internal

#endif  // R3_ENGINE_INTERNAL_SUBPROCESS_H_
