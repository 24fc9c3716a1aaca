#include "r3/model/sglang_layout.h"

#include <algorithm>
#include <numeric>

#include "r3/case/checked_math.h"

namespace r3::model {
namespace {

// Rows each rank's block holds in the gathered batch (its real rows first).
int64_t BlockRows(const SglangStep& step, int64_t rank) {
  switch (step.gather) {
    case SglangGather::kSumLen:
      return step.tokens[static_cast<size_t>(rank)];
    case SglangGather::kMaxLen:
      return *std::max_element(step.tokens.begin(), step.tokens.end());
    case SglangGather::kCudaGraph:
      return CheckedMul(step.graph_bs, step.tokens_per_request);
  }
  return 0;
}

}  // namespace

RowRuns SglangGathered(const SglangStep& step) {
  RowRuns out;
  for (size_t r = 0; r < step.tokens.size(); ++r) {
    const int64_t block = BlockRows(step, static_cast<int64_t>(r));
    AppendRun(out, {static_cast<int64_t>(r), 0, step.tokens[r]});
    AppendRun(out, {RowRun::kPad, 0, block - step.tokens[r]});
  }
  return out;
}

RowSlice SglangLocalRows(const SglangStep& step, int64_t rank) {
  int64_t start = 0;
  for (int64_t r = 0; r < rank; ++r) start = CheckedAdd(start, BlockRows(step, r));
  return {start, step.tokens[static_cast<size_t>(rank)]};
}

int64_t RequiredSglangRows(const SglangLimits& limits) {
  const int64_t per_rank = std::max(limits.chunked_prefill_size,
                                    CheckedMul(limits.max_running_requests,
                                               limits.tokens_per_request));
  return CheckedMul(limits.dp, per_rank);
}

}  // namespace r3::model
