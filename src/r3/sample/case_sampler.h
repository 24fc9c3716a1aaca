// A plain seeded sampler of legal cases for `r3check verify`. It draws the
// step shapes vLLM produces (eager ragged, CUDA-graph padded, decode, warmup,
// a lone token with every other DP rank idle, zero-token ranks) from a
// fixed-width PRNG, so a seed gives the same cases
// on every platform. The RapidCheck generators in properties/ are the
// shrinking counterpart.
#ifndef R3_SAMPLE_CASE_SAMPLER_H_
#define R3_SAMPLE_CASE_SAMPLER_H_

#include <cstdint>
#include <random>

#include "r3/case/case.h"

namespace r3::sample {

class CaseSampler {
 public:
  explicit CaseSampler(uint64_t seed) : rng_(seed) {}
  Case Next();

 private:
  int64_t Uniform(int64_t lo, int64_t hi);  // inclusive
  bool Chance(int percent);
  std::mt19937_64 rng_;
};

}  // namespace r3::sample

#endif  // R3_SAMPLE_CASE_SAMPLER_H_
