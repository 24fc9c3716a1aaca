#include "r3/model/sizing.h"

#include "r3/case/checked_math.h"
#include "r3/model/sequence_parallel.h"

namespace r3::model {

int64_t RequiredReplayRows(const Config& config) {
  const int64_t m = config.max_num_batched_tokens;
  const bool sp = SpEnabled(config);
  const bool naive = config.dispatch == Dispatch::kNaive && (config.dp > 1 || sp);
  if (!naive) return sp ? ShardRows(m, config.tp) : m;
  if (!sp) return CheckedMul(config.dp, m);
  // Each of the D*T shards holds cdiv(M, T) rows when every rank is at M.
  return CheckedMul(CheckedMul(config.dp, config.tp), ShardRows(m, config.tp));
}

}  // namespace r3::model
