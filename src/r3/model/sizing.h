// The exact replay-buffer bound: the most rows the monolithic kernel can be
// handed in any legal step (0 <= tokens[d] <= N[d] <= M) of a configuration.
#ifndef R3_MODEL_SIZING_H_
#define R3_MODEL_SIZING_H_

#include <cstdint>

#include "r3/case/case.h"

namespace r3::model {

// Closed form: naive dispatch gathers the worst case of every rank at M
// rows (SP shards rounded up to a multiple of T); internal dispatch sees one
// rank's rows (or one SP shard of them).
int64_t RequiredReplayRows(const Config& config);

}  // namespace r3::model

#endif  // R3_MODEL_SIZING_H_
