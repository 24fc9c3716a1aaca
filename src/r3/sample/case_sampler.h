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
#include "r3/case/layout_domain.h"

namespace r3::sample {

class CaseSampler {
 public:
  // Cases of `domain`'s layouts (an engine with fewer than vLLM's): each
  // drawn case is fitted into it, and a domain with its own chunked prefill
  // size gets one drawn after the case (so vLLM's stream is unchanged).
  explicit CaseSampler(uint64_t seed, LayoutDomain domain = {})
      : rng_(seed), domain_(domain) {}
  Case Next();

 private:
  Case NextVllm();
  int64_t Uniform(int64_t lo, int64_t hi);  // inclusive
  bool Chance(int percent);
  std::mt19937_64 rng_;
  LayoutDomain domain_;
};

}  // namespace r3::sample

#endif  // R3_SAMPLE_CASE_SAMPLER_H_
