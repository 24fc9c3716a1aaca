// Structure-aware mutation of cases for the layout fuzz target: changes a
// case the way a person editing a case file would (ranks, TP, EP/SP/dispatch
// flags, M, token and padded counts, expert and layer counts), preferring
// boundary values (0, 1, M, multiples of TP and one off, powers of two and
// one off, 256/32768 experts). Pure and seeded, so it is unit-tested in the
// ordinary build; layout_mutator.cc plugs it into libFuzzer.
#ifndef R3_FUZZ_CASE_MUTATOR_H_
#define R3_FUZZ_CASE_MUTATOR_H_

#include <cstdint>

#include "r3/case/case.h"

namespace r3::fuzz {

// SplitMix64: the same stream on every platform and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  int64_t Below(int64_t n);             // [0, n), n >= 1
  int64_t Between(int64_t lo, int64_t hi);  // [lo, hi]
  bool OneIn(int64_t n) { return Below(n) == 0; }

 private:
  uint64_t state_;
};

// Bounds the mutator keeps to, well inside the case limits, so that
// mutated inputs stay fast (see kMaxFuzzRanks in layout_target.cc).
inline constexpr int64_t kMutatorMaxDp = 64;
inline constexpr int64_t kMutatorMaxTp = 16;
inline constexpr int64_t kMutatorMaxTokens = int64_t{1} << 16;

// Applies one to three edits and repairs the case into a valid one.
// Returns false (leaving `c` unspecified) in the rare case no valid case
// results; the caller falls back to another mutation.
bool MutateCase(Case& c, Rng& rng);

// A small valid case drawn from scratch, for runs from an empty corpus.
Case RandomCase(Rng& rng);

}  // namespace r3::fuzz

#endif  // R3_FUZZ_CASE_MUTATOR_H_
