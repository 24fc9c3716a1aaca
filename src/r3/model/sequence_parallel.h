// Sequence parallelism for MoE: when it is on, and the `local_sizes` list
// the MoE runner publishes for every forward with DP metadata.
#ifndef R3_MODEL_SEQUENCE_PARALLEL_H_
#define R3_MODEL_SEQUENCE_PARALLEL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "r3/case/case.h"

namespace r3::model {

// SP is on iff EP is on, TP > 1 and DP > 1 (every backend modelled here
// supports it), unless the case forces it off.
bool SpEnabled(const Config& config);

// Rows of DP rank d held by each of its SP shards: cdiv(N[d], T).
int64_t ShardRows(int64_t padded_tokens, int64_t tp);

// [cdiv(N[0],sp)]*sp + [cdiv(N[1],sp)]*sp + ..., sp = T with SP else 1.
// Unset (nullopt) without DP metadata, i.e. when dp == 1.
std::optional<std::vector<int64_t>> LocalSizes(const Case& c);

}  // namespace r3::model

#endif  // R3_MODEL_SEQUENCE_PARALLEL_H_
