// The client side of the fork server (engines/runtime/r3runtime/zygote.py):
// the process Subprocess forks for an adapter asks the fork server to fork
// the adapter instead of exec'ing it, and then stands in for it.
#ifndef R3_ENGINE_INTERNAL_FORK_CLIENT_H_
#define R3_ENGINE_INTERNAL_FORK_CLIENT_H_

#include <string>
#include <vector>

namespace r3::engine::internal {

// Called in the child Subprocess forked, with the adapter's stdin and stdout
// on descriptors 0 and 1 and the process group its own. Hands argv, the
// environment, the working directory, the umask, descriptors 0-2 and this
// process group to the fork server at `socket`, whose child joins this
// process group (so that r3check's SIGTERM and SIGKILL of the group reach
// it as they reach an exec'd adapter) and becomes the adapter. This process
// then ends the way the adapter did: the same exit status, or killed by
// the same signal; it outlives catchable signals meanwhile (the adapter
// gets them too, and decides). A fork server that ends before the adapter
// does: the adapter is SIGKILLed, one line on stderr, exit status 1.
//
// Returns only when the fork server did not take the request (no socket,
// gone, refused): nothing was started, and the caller execs argv itself.
void RunViaForkServer(const std::string& socket, const std::vector<std::string>& argv);

}  // namespace r3::engine::internal

#endif  // R3_ENGINE_INTERNAL_FORK_CLIENT_H_
