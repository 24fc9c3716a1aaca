// The kill matrix: the invariant properties run programmatically (fixed
// seed, no output) against every seeded bug of the catalogue, the
// pre-#50874 SUT and the pre-#50874 sizing policy. Used by the kill-matrix
// test (one seed) and bench/kill_matrix_bench.cc (20 seeds).
#ifndef R3_PROPERTIES_KILL_MATRIX_H_
#define R3_PROPERTIES_KILL_MATRIX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "r3/check/verdict.h"
#include "r3/sut/sut.h"

namespace r3::props {

struct KillTarget {
  std::string name;         // "mutant no-sp-trim", "sut vllm-pre-50874", ...
  std::string description;
  sut::SutOptions options;
  bool must_survive = false;  // equivalent mutant / safe policy: a kill is a false alarm
};

// Every non-GPU mutant of sut::MutantCatalogue() (the equivalent one marked
// must_survive), then vllm-pre-50874, the legacy ("pre-#50874 sizing")
// policy, and the tight policy (must survive).
std::vector<KillTarget> KillTargets();

struct PropertyRun {
  std::optional<check::Invariant> invariant;  // nullopt: all invariants at once
  bool failed = false;
  bool error = false;        // RapidCheck gave up or errored (never a kill)
  int cases = 0;             // cases run; on failure, the index of the first failing case
  int shrinks = 0;
  std::string counterexample;  // the (shrunk) case, r3case text
  std::string message;         // the property's failure report
  double seconds = 0;
};

// Runs InvariantHolds(inv) (AllInvariantsHold when nullopt) against
// `options` with RapidCheck's own engine: `seed`, at most `max_success`
// cases, shrinking unless `shrink` is false. Prints nothing.
PropertyRun RunProperty(std::optional<check::Invariant> inv, const sut::SutOptions& options,
                        uint64_t seed, int max_success, bool shrink);

}  // namespace r3::props

#endif  // R3_PROPERTIES_KILL_MATRIX_H_
