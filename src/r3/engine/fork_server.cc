#include "r3/engine/fork_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace r3::engine {
namespace {

using Clock = std::chrono::steady_clock;

// A private folder for the socket whose path fits sockaddr_un.
std::string MakeDir() {
  std::vector<std::string> bases;
  if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0') bases.push_back(tmp);
  bases.push_back("/tmp");
  for (const std::string& base : bases) {
    std::string templ = base + "/r3check-zygote-XXXXXX";
    if (templ.size() + std::string("/socket").size() >= sizeof(sockaddr_un{}.sun_path)) continue;
    if (mkdtemp(templ.data()) != nullptr) return templ;  // mode 0700
  }
  return "";
}

bool Exited(int pid, int64_t wait_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  int status = 0;
  while (true) {
    const int r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::unique_ptr<ForkServer> ForkServer::Start(const LaunchOptions& launch, int64_t wait_ms) {
  if (launch.launch != "none") return nullptr;
  std::error_code ec;
  const std::string zygote =
      (std::filesystem::path(launch.adapters_dir) / "runtime" / "r3runtime" / "zygote.py").string();
  if (!std::filesystem::is_regular_file(zygote, ec)) return nullptr;
  std::unique_ptr<ForkServer> server(new ForkServer());
  server->dir_ = MakeDir();
  if (server->dir_.empty()) return nullptr;
  server->socket_ = server->dir_ + "/socket";
  const std::string python = AdapterPython(launch);
  std::vector<std::string> argv = {python, zygote, server->socket_};
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int control[2];
  int status[2];
  if (pipe2(control, O_CLOEXEC) != 0) return nullptr;
  if (pipe2(status, O_CLOEXEC) != 0) {
    close(control[0]);
    close(control[1]);
    return nullptr;
  }
  signal(SIGPIPE, SIG_IGN);
  const int pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(control[0], 0);
    dup2(status[1], 1);
    signal(SIGPIPE, SIG_DFL);
    execvp(args[0], args.data());
    _exit(127);  // silent: each adapter then says that the interpreter cannot run
  }
  close(control[0]);
  close(status[1]);
  if (pid < 0) {
    close(control[1]);
    close(status[0]);
    return nullptr;
  }
  setpgid(pid, pid);
  server->pid_ = pid;
  server->control_ = control[1];
  // "listening\n" once the socket takes connections (before torch is
  // imported: adapters queue up meanwhile).
  std::string said;
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  while (said.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{status[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char buf[64];
    const ssize_t n = read(status[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    said.append(buf, static_cast<size_t>(n));
  }
  close(status[0]);
  if (said != "listening\n") return nullptr;  // the destructor stops it
  return server;
}

void ForkServer::Release() {
  if (control_ >= 0) close(control_);
  control_ = -1;
  pid_ = -1;
  dir_.clear();
}

ForkServer::~ForkServer() {
  if (control_ >= 0) close(control_);
  if (pid_ > 0) {
    // End of file on its stdin: it SIGKILLs what still runs, removes the
    // socket and exits.
    if (!Exited(pid_, 2000)) {
      kill(-pid_, SIGTERM);
      if (!Exited(pid_, 1000)) {
        kill(-pid_, SIGKILL);
        int status = 0;
        waitpid(pid_, &status, 0);
      }
    }
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace r3::engine
