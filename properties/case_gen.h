// RapidCheck generators of legal r3 cases: configurations and the steps vLLM
// can produce for them. Every choice is drawn through a shrinkable index
// whose first option is the small, readable one, so RapidCheck's own
// shrinking moves a failure toward fewer DP ranks, TP 1, EP/SP off and
// small counts whenever the failure does not need more.
//
// The distribution does not depend on RapidCheck's `size`: each of the
// default 100 cases is a full-strength case (the kill matrix depends on it),
// so RC_PARAMS max_size has no effect here.
#ifndef R3_PROPERTIES_CASE_GEN_H_
#define R3_PROPERTIES_CASE_GEN_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>

#include <rapidcheck.h>

#include "properties/case_domain_gen.h"
#include "r3/case/case.h"

namespace r3::props {

// Generator ranges (the spec's deployments): DP 1..64, TP 1..8.
inline constexpr int64_t kGenMaxDp = 64;
inline constexpr int64_t kGenMaxTp = 8;

// Those ranges as a shape of the case domain; every other field spans its
// limits. GenCase's cases lie in it.
const CaseShape& GeneratorShape();

// The step shapes GenStep draws from, in shrink order (first = simplest).
enum class StepKind {
  kEager,          // ragged real counts, no padding
  kDecode,         // one token per rank (an idle rank pads a dummy row)
  kGraphPadded,    // every rank at one CUDA-graph capture size
  kWarmup,         // every rank at M
  kZeroRanks,      // some ranks without tokens
  kNotDivisibleTp, // counts k*T + r, 0 < r < T
  kRaggedPadded,   // eager DP step where each rank rounds up on its own
  kLoneToken,      // one DP rank with a single token, every other rank idle
};

rc::Gen<Config> GenConfig();
rc::Gen<Step> GenStep(const Config& config);
rc::Gen<Step> GenStepOfKind(const Config& config, StepKind kind);
rc::Gen<Case> GenCase();

}  // namespace r3::props

#endif  // R3_PROPERTIES_CASE_GEN_H_
