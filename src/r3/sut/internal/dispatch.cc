#include "r3/sut/internal/dispatch.h"

#include <algorithm>
#include <string>

#include "r3/case/checked_math.h"

namespace r3::sut::internal {

bool UseSequenceParallelMoe(const Config& config) {
  const bool backend_allows = config.sp != SpMode::kOff;
  return backend_allows && config.ep && config.dp > 1 && config.tp > 1;
}

bool UsesNaiveDispatch(const Config& config) {
  return config.dispatch == Dispatch::kNaive &&
         (config.dp > 1 || UseSequenceParallelMoe(config));
}

namespace {

int64_t ShardSize(int64_t rows, int64_t shards, ShardRounding rounding) {
  return rounding == ShardRounding::kFloor ? rows / shards : (rows + shards - 1) / shards;
}

}  // namespace

std::vector<int64_t> ComputeSpNumTokens(const std::vector<int64_t>& num_tokens, int64_t sp,
                                        ShardRounding rounding) {
  std::vector<int64_t> out;
  out.reserve(num_tokens.size() * static_cast<size_t>(sp));
  for (int64_t n : num_tokens) {
    const int64_t per_shard = ShardSize(n, sp, rounding);
    out.insert(out.end(), static_cast<size_t>(sp), per_shard);
  }
  return out;
}

RowRuns SequenceParallelChunk(int64_t dp_rank, int64_t num_tokens, int64_t tp_rank,
                              int64_t tp_size, ShardRounding rounding) {
  const int64_t shard = ShardSize(num_tokens, tp_size, rounding);
  const int64_t padded_len = CheckedMul(shard, tp_size);
  // The padded batch is [0, real) of the DP rank's rows, then padding up to
  // padded_len; shard tp_rank is [start, end) of it (end <= padded_len).
  const int64_t real = std::min(num_tokens, padded_len);
  const int64_t start = CheckedMul(tp_rank, shard);
  const int64_t end = CheckedMul(tp_rank + 1, shard);
  RowRuns chunk;
  chunk.reserve(2);
  AppendRun(chunk, {dp_rank, start, std::min(end, real) - start});
  AppendRun(chunk, {RowRun::kPad, 0, end - std::max(start, real)});
  return chunk;
}

int64_t WorstCaseKernelRows(const Config& config) {
  const int64_t m = config.max_num_batched_tokens;
  const bool sp = UseSequenceParallelMoe(config);
  if (!UsesNaiveDispatch(config)) return sp ? ComputeSpNumTokens({m}, config.tp).front() : m;
  const std::vector<int64_t> warmup(static_cast<size_t>(config.dp), m);
  return CheckedSum(ComputeSpNumTokens(warmup, sp ? config.tp : 1));
}

}  // namespace r3::sut::internal
