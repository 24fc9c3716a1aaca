// The flags of this run that shape a verdict, as shell words, so that a
// printed hint ("again: r3check verify --replay S:N ...") reproduces the
// exact run and not a different one that passes.
#ifndef R3_CLI_REPLAY_HINT_H_
#define R3_CLI_REPLAY_HINT_H_

#include <string>

#include "cli/gpu_flags.h"
#include "cli/sut_flags.h"

namespace r3::cli {

// " --sut S --mutant M ... --policy P" and every engine and GPU flag that is
// not at its default; "" when all are. Values are shell-quoted when needed.
std::string VerdictFlags(const SutFlags& flags, const GpuFlags& gpu);

}  // namespace r3::cli

#endif  // R3_CLI_REPLAY_HINT_H_
