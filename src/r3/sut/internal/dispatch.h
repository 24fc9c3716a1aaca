// vLLM's dispatch side, re-implemented for the host SUTs: whether MoE SP is
// on, _compute_sp_num_tokens and SP chunking (all_gatherv is in
// dispatch_plan.cc). Deliberately not shared with r3::model.
#ifndef R3_SUT_INTERNAL_DISPATCH_H_
#define R3_SUT_INTERNAL_DISPATCH_H_

#include <cstdint>
#include <vector>

#include "r3/case/case.h"
#include "r3/case/rows.h"

namespace r3::sut::internal {

bool UseSequenceParallelMoe(const Config& config);

// True when the AgRs manager all-gathers before the kernel.
bool UsesNaiveDispatch(const Config& config);

// How a shard's size is rounded: vLLM's cdiv, or the floor-shard-size
// mutant's floor.
enum class ShardRounding { kCeil, kFloor };

// _compute_sp_num_tokens(num_tokens_across_dp, sp).
std::vector<int64_t> ComputeSpNumTokens(const std::vector<int64_t>& num_tokens, int64_t sp,
                                        ShardRounding rounding = ShardRounding::kCeil);

// sequence_parallel_chunk: pad DP rank d's rows to a multiple of tp and keep
// shard `tp_rank`.
RowRuns SequenceParallelChunk(int64_t dp_rank, int64_t num_tokens, int64_t tp_rank,
                              int64_t tp_size, ShardRounding rounding = ShardRounding::kCeil);

// Kernel input rows of the warmup step (every DP rank at M): the most the
// dispatcher can hand the kernel.
int64_t WorstCaseKernelRows(const Config& config);

}  // namespace r3::sut::internal

#endif  // R3_SUT_INTERNAL_DISPATCH_H_
