// What a fuzz target tells the replay driver (replay_main.cc) beyond its
// return value. A target defines the hooks it has; the driver's references
// are weak, so a target without one links unchanged, and libFuzzer never
// looks at them.
#ifndef R3_FUZZ_REPLAY_HOOKS_H_
#define R3_FUZZ_REPLAY_HOOKS_H_

#include <csignal>

extern "C" {
// Set to 1 just before the target aborts on a finding (the layout target: a
// violation no known finding explains). An abort without it is a crash, not
// the failure a test expected.
extern __attribute__((weak)) volatile std::sig_atomic_t r3_fuzz_finding;
// Set for every input: 1 when the target rejected it as invalid although it
// returned 0 (the parser target keeps rejected inputs for their coverage).
extern __attribute__((weak)) int r3_fuzz_rejected;
}

#endif  // R3_FUZZ_REPLAY_HOOKS_H_
