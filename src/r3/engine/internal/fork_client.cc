#include "r3/engine/internal/fork_client.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace r3::engine::internal {
namespace {

// What the adapter, in this process group, gets too: this process waits
// for the adapter's own answer to them instead of dying first.
constexpr int kOutlived[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

constexpr size_t kNumOutlived = sizeof kOutlived / sizeof kOutlived[0];

void Nothing(int) {}

// Catches kOutlived, keeping what was there for an exec after all (a
// signal ignored here, as under nohup, stays ignored in the adapter).
void CatchSignals(struct sigaction (&before)[kNumOutlived]) {
  struct sigaction sa {};
  sa.sa_handler = Nothing;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < kNumOutlived; ++i) sigaction(kOutlived[i], &sa, &before[i]);
}

void RestoreSignals(const struct sigaction (&before)[kNumOutlived]) {
  for (size_t i = 0; i < kNumOutlived; ++i) sigaction(kOutlived[i], &before[i], nullptr);
}

// The descriptors an exec would close (r3check opens everything O_CLOEXEC:
// the pipes of other adapters, of --jobs workers, of the fork server). This
// process does not exec, and must not keep them open: their readers wait
// for end of file.
void CloseOnExecDescriptors() {
  std::vector<int> fds;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (end != e->d_name && *end == '\0' && fd > 2 && fd != dirfd(d)) fds.push_back(static_cast<int>(fd));
    }
    closedir(d);
  }
  for (const int fd : fds) {
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) != 0) close(fd);
  }
}

void Append(std::string* out, const std::string& field) {
  out->append(field);
  out->push_back('\0');
}

// One reply: "pid N", "status N" or "refuse WHY"; empty at end of file or on
// an error.
std::string Receive(int sock) {
  char buf[512];
  while (true) {
    const ssize_t n = recv(sock, buf, sizeof buf - 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    return std::string(buf, static_cast<size_t>(n));
  }
}

bool Number(const std::string& reply, const char* word, long* out) {
  const size_t len = std::strlen(word);
  if (reply.compare(0, len, word) != 0 || reply.size() <= len || reply[len] != ' ') return false;
  char* end = nullptr;
  *out = std::strtol(reply.c_str() + len + 1, &end, 10);
  return end != reply.c_str() + len + 1 && *end == '\0';
}

[[noreturn]] void EndAs(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // the adapter's core, if any, is the adapter's
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    kill(getpid(), sig);
    _exit(128 + sig);
  }
  _exit(1);
}

}  // namespace

void RunViaForkServer(const std::string& socket_path, const std::vector<std::string>& argv) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path) return;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  CloseOnExecDescriptors();
  const int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0) return;
  const int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct sigaction before[kNumOutlived];
  CatchSignals(before);
  const auto give_up = [&] {
    close(sock);
    if (cwd >= 0) close(cwd);
    RestoreSignals(before);
  };
  int rc;
  do {
    rc = connect(sock, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 || cwd < 0) return give_up();

  // b"r3zygote 1\0" PGID \0 UMASK \0 ARGC \0 ARGV... ENVC \0 ENV... (zygote.py)
  const mode_t mask = umask(0);
  umask(mask);
  std::string request;
  Append(&request, "r3zygote 1");
  Append(&request, std::to_string(getpgrp()));
  Append(&request, std::to_string(mask));
  Append(&request, std::to_string(argv.size()));
  for (const std::string& a : argv) Append(&request, a);
  size_t envc = 0;
  for (char** e = environ; *e != nullptr; ++e) ++envc;
  Append(&request, std::to_string(envc));
  for (char** e = environ; *e != nullptr; ++e) Append(&request, *e);

  const int fds[4] = {0, 1, 2, cwd};
  char control[CMSG_SPACE(sizeof fds)] = {};
  iovec iov{request.data(), request.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(cmsg), fds, sizeof fds);
  ssize_t sent;
  do {
    sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != static_cast<ssize_t>(request.size())) return give_up();

  // "pid N" comes from the child itself once it is in this process group;
  // anything else means no child was made.
  long pid = 0;
  if (!Number(Receive(sock), "pid", &pid) || pid <= 0) return give_up();
  close(cwd);
  // The adapter holds the pipes now: r3check sees end of file on its stdout
  // when the adapter closes it, not when this process does.
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    close(devnull);
  }
  long status = 0;
  if (Number(Receive(sock), "status", &status)) EndAs(static_cast<int>(status));
  kill(static_cast<pid_t>(pid), SIGKILL);
  const std::string line = "r3check: the fork server ended while the adapter (pid " +
                           std::to_string(pid) + ") was running; it was stopped\n";
  (void)!write(2, line.data(), line.size());
  _exit(1);
}

}  // namespace r3::engine::internal
