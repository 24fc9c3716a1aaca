// The fork server (zygote) of `r3check sweep`: one Python process that has
// imported torch forks every version's adapter, instead of each adapter
// importing torch again (engines/runtime/r3runtime/zygote.py; docs/engines.md,
// "Sweeping versions"). An adapter it forks is the process a normal launch
// would have been (same argv, stdio, environment, process group, exit
// status), so verdicts and output are the same bytes.
#ifndef R3_ENGINE_FORK_SERVER_H_
#define R3_ENGINE_FORK_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "r3/engine/engine_sut.h"

namespace r3::engine {

class ForkServer {
 public:
  // Starts the fork server for adapters launched with `launch` (its python
  // and adapters dir), in a private temporary folder (under $TMPDIR, else
  // /tmp), and waits up to wait_ms for it to listen. nullptr when none
  // applies (--engine-launch torchrun, no zygote.py in the adapters dir) or
  // it does not start: adapters are then exec'd as without one, with their
  // own messages (the fork server prints nothing). A fork server that
  // cannot import torch stops by itself, and every adapter is exec'd.
  static std::unique_ptr<ForkServer> Start(const LaunchOptions& launch, int64_t wait_ms = 10000);

  // Ends it: every adapter it forked that still runs is SIGKILLed, and the
  // folder removed.
  ~ForkServer();
  ForkServer(const ForkServer&) = delete;
  ForkServer& operator=(const ForkServer&) = delete;

  // For LaunchOptions::fork_server.
  const std::string& socket() const { return socket_; }
  int pid() const { return pid_; }

  // In a process fork()ed from this one (a sweep --jobs worker): lets go
  // of the fork server without stopping it, so that it notices at once
  // when the process that started it ends.
  void Release();

 private:
  ForkServer() = default;

  std::string dir_;
  std::string socket_;
  int pid_ = -1;
  int control_ = -1;  // its stdin: end of file stops it
};

}  // namespace r3::engine

#endif  // R3_ENGINE_FORK_SERVER_H_
