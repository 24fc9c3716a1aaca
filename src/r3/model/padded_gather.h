// The padded all-gather other engines use instead of vLLM's ragged
// all_gatherv (vllm-ascend's all_gather, SGLang's MAX_LEN DP padding):
// every member sends max(N) rows, its own rows then padding, so pad rows
// sit between members, not only at the tail. And torch.tensor_split, which
// vllm-ascend splits SP shards with (vLLM pads every shard to cdiv(N, T)).
// Pure functions; docs/layouts.md has the worked examples.
#ifndef R3_MODEL_PADDED_GATHER_H_
#define R3_MODEL_PADDED_GATHER_H_

#include <cstdint>
#include <span>
#include <vector>

#include "r3/case/rows.h"

namespace r3::model {

// A run of rows [start, start + count) of a tensor.
struct RowSlice {
  int64_t start = 0;
  int64_t count = 0;
  friend bool operator==(const RowSlice&, const RowSlice&) = default;
};

// The gathered tensor: member m's rows at [m * P, m * P + rows(m)), pad to
// (m + 1) * P, with P = the most rows of any member.
RowRuns PaddedAllGather(std::span<const RowRuns> members);

// Where member `member`'s rows lie in PaddedAllGather of members with these
// row counts.
RowSlice PaddedMemberRows(std::span<const int64_t> rows, size_t member);

// Part sizes of torch.tensor_split(rows, parts): the first rows % parts
// parts hold one row more than the others.
std::vector<int64_t> TensorSplitSizes(int64_t rows, int64_t parts);

}  // namespace r3::model

#endif  // R3_MODEL_PADDED_GATHER_H_
