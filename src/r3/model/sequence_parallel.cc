#include "r3/model/sequence_parallel.h"

#include "r3/case/checked_math.h"

namespace r3::model {

int64_t ShardRows(int64_t padded_tokens, int64_t tp) { return CeilDiv(padded_tokens, tp); }

std::optional<std::vector<int64_t>> LocalSizes(const Case& c) {
  if (c.config.dp == 1) return std::nullopt;
  const int64_t sp = SpEnabled(c.config) ? c.config.tp : 1;
  std::vector<int64_t> sizes;
  sizes.reserve(static_cast<size_t>(CheckedMul(c.config.dp, sp)));
  for (int64_t n : c.step.padded) {
    const int64_t shard = ShardRows(n, sp);
    for (int64_t s = 0; s < sp; ++s) sizes.push_back(shard);
  }
  return sizes;
}

}  // namespace r3::model
