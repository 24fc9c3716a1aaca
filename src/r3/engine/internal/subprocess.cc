#include "r3/engine/internal/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "r3/engine/internal/fork_client.h"

namespace r3::engine::internal {
namespace {

using Clock = std::chrono::steady_clock;

int64_t MsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max<int64_t>(0, left.count());
}

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv, int64_t exit_grace_ms,
                       const std::string& fork_server)
    : exit_grace_ms_(exit_grace_ms) {
  if (argv.empty()) throw SubprocessError("empty command");
  // A write to an adapter that died must be an error here, not SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  int in_pipe[2];
  int out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) throw SubprocessError(std::strerror(errno));
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    throw SubprocessError(std::strerror(errno));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw SubprocessError(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    setpgid(0, 0);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    signal(SIGPIPE, SIG_DFL);
    if (!fork_server.empty()) RunViaForkServer(fork_server, argv);  // returns if it did not take it
    execvp(args[0], args.data());
    const std::string msg = "r3check: cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!write(2, msg.data(), msg.size());
    _exit(127);
  }
  setpgid(pid_, pid_);
  close(in_pipe[0]);
  close(out_pipe[1]);
  to_child_ = in_pipe[1];
  from_child_ = out_pipe[0];
  fcntl(to_child_, F_SETFL, fcntl(to_child_, F_GETFL) | O_NONBLOCK);
  fcntl(from_child_, F_SETFL, fcntl(from_child_, F_GETFL) | O_NONBLOCK);
}

Subprocess::~Subprocess() { Stop(); }

void Subprocess::Stop() {
  if (to_child_ >= 0) close(to_child_);
  to_child_ = -1;
  if (pid_ > 0 && !exited_) {
    // A well-behaved adapter exits on EOF (or after "bye"); give it a moment.
    for (int64_t i = 0; i < exit_grace_ms_ / 10 && Status() == "still running"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!exited_) {
      // SIGTERM first: an adapter unwinds on it and removes the engine's
      // shared memory and lock files; SIGKILL for one that does not.
      kill(-pid_, SIGTERM);
      for (int i = 0; i < 100 && Status() == "still running"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (!exited_) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, &wait_status_, 0);
        exited_ = true;
      }
    }
  }
  if (pid_ > 0) kill(-pid_, SIGKILL);  // leftovers of the group (torchrun workers)
  if (from_child_ >= 0) close(from_child_);
  from_child_ = -1;
}

std::string Subprocess::Status() {
  if (!exited_ && pid_ > 0 && waitpid(pid_, &wait_status_, WNOHANG) == pid_) exited_ = true;
  if (!exited_) return "still running";
  if (WIFEXITED(wait_status_)) return "exited with status " + std::to_string(WEXITSTATUS(wait_status_));
  if (WIFSIGNALED(wait_status_)) return "killed by signal " + std::to_string(WTERMSIG(wait_status_));
  return "stopped";
}

std::string Subprocess::StatusAfterExit(int64_t wait_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  std::string status = Status();
  while (status == "still running" && MsLeft(deadline) > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    status = Status();
  }
  return status;
}

bool Subprocess::WriteLine(const std::string& line, int64_t timeout_ms) {
  const std::string data = line + "\n";
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t done = 0;
  while (done < data.size()) {
    pollfd p{to_child_, POLLOUT, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(MsLeft(deadline), 1000)));
    if (ready < 0 && errno != EINTR) throw SubprocessError(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) {
      if (MsLeft(deadline) == 0) {
        throw SubprocessError("no progress reading its input for " + std::to_string(timeout_ms) +
                              " ms (hung?)");
      }
      continue;
    }
    const ssize_t n = write(to_child_, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (errno == EPIPE) return false;
      throw SubprocessError(std::string("write: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::optional<std::string> Subprocess::ReadLine(int64_t timeout_ms, size_t max_line_bytes) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t scanned = 0;
  char chunk[65536];
  while (true) {
    const size_t newline = buffer_.find('\n', scanned);
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    scanned = buffer_.size();
    if (buffer_.size() > max_line_bytes) {
      throw SubprocessError("sent a line longer than the protocol's cap of " +
                            std::to_string(max_line_bytes) + " bytes (docs/engines.md)");
    }
    pollfd p{from_child_, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(MsLeft(deadline), 1000)));
    if (ready < 0 && errno != EINTR) throw SubprocessError(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) {
      if (MsLeft(deadline) == 0) {
        throw SubprocessError("no reply within " + std::to_string(timeout_ms) +
                              " ms (hung? engine code may be waiting on input: a breakpoint(), "
                              "input() or read of stdin)");
      }
      continue;
    }
    const ssize_t n = read(from_child_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      throw SubprocessError(std::string("read: ") + std::strerror(errno));
    }
    if (n == 0) {
      if (!buffer_.empty()) {
        std::string line = std::move(buffer_);
        buffer_.clear();
        return line;
      }
      // It closed stdout; let it finish exiting so Status() can say how.
      for (int i = 0; i < 100 && Status() == "still running"; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return std::nullopt;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace r3::engine::internal
