// The step shapes vLLM produces, built from per-rank counts: the property
// generators, the `verify` sampler and the fuzz mutator draw counts their
// own way (each has its own distribution and RNG) and make the step with
// these, and the classifiers recognise a lone token with IsLoneToken.
#ifndef R3_CASE_STEP_SHAPES_H_
#define R3_CASE_STEP_SHAPES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "r3/case/case.h"

namespace r3 {

// Eager: no padding, N = tokens.
Step EagerStep(std::vector<int64_t> tokens);

// Every rank padded to one size `n` (a CUDA-graph step; decode at n = 1).
Step UniformStep(std::vector<int64_t> tokens, int64_t n);

// Warmup (profile run): every rank at M.
Step WarmupStep(int64_t dp, int64_t m);

// One DP rank (`lone`) decodes a single token, every other rank is idle.
Step LoneTokenStep(int64_t dp, int64_t lone);

// The lone-token shape: DP > 1, no padding, one rank with one token and
// the others with none.
bool IsLoneToken(const Case& c);

// vLLM's default CUDA-graph capture sizes no larger than `max_tokens`
// (1, 2, 4, 8, then steps of 8 up to 256, of 16 up to 512).
std::vector<int64_t> CaptureSizesUpTo(int64_t max_tokens);

// The smallest capture size at or above `tokens`, when one is no larger
// than `max_tokens`.
std::optional<int64_t> CaptureSizeFor(int64_t tokens, int64_t max_tokens);

}  // namespace r3

#endif  // R3_CASE_STEP_SHAPES_H_
