// Sequence parallelism for MoE: the `local_sizes` list the MoE runner
// publishes for every forward with DP metadata. When SP is on is the case
// layer's rule (r3::SpEnabled, case.h).
#ifndef R3_MODEL_SEQUENCE_PARALLEL_H_
#define R3_MODEL_SEQUENCE_PARALLEL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "r3/case/case.h"

namespace r3::model {

// Rows of DP rank d held by each of its SP shards: cdiv(N[d], T).
int64_t ShardRows(int64_t padded_tokens, int64_t tp);

// [cdiv(N[0],sp)]*sp + [cdiv(N[1],sp)]*sp + ..., sp = T with SP else 1.
// Unset (nullopt) without DP metadata, i.e. when dp == 1.
std::optional<std::vector<int64_t>> LocalSizes(const Case& c);

}  // namespace r3::model

#endif  // R3_MODEL_SEQUENCE_PARALLEL_H_
