// Properties of the other engines' layouts (docs/layouts.md) over every DP
// rank and TP rank of generated steps, larger than the unit tests' brute
// force: each rank's rows are where its slice says, the gathered rows stay
// within the exact SGLang bound for any legal step, and vllm-ascend's
// capture is right under the all-gather and whenever its shard branch runs.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <vector>

#include "r3/model/ascend_layout.h"
#include "r3/model/padded_gather.h"
#include "r3/model/sglang_layout.h"

namespace r3::model {
namespace {

RowRuns Own(int64_t dp, int64_t rows) {
  RowRuns out;
  AppendRun(out, {dp, 0, rows});
  return out;
}

rc::Gen<std::vector<int64_t>> GenTokens(int64_t most) {
  return rc::gen::container<std::vector<int64_t>>(*rc::gen::inRange(1, 9),
                                                  rc::gen::inRange<int64_t>(0, most + 1));
}

RC_GTEST_PROP(EngineLayoutsProps, EveryMemberOfAPaddedGatherIsAtItsSlot, ()) {
  const std::vector<int64_t> tokens = *GenTokens(512);
  std::vector<RowRuns> members;
  for (size_t r = 0; r < tokens.size(); ++r) members.push_back(Own(static_cast<int64_t>(r), tokens[r]));
  const RowTensor gathered(PaddedAllGather(members));
  const int64_t most = *std::max_element(tokens.begin(), tokens.end());
  RC_ASSERT(gathered.rows() == static_cast<int64_t>(tokens.size()) * most);
  for (size_t r = 0; r < tokens.size(); ++r) {
    const RowSlice s = PaddedMemberRows(tokens, r);
    RC_ASSERT(gathered.Slice(s.start, s.start + s.count) == members[r]);
    RowRuns pad;
    AppendRun(pad, {RowRun::kPad, 0, most - tokens[r]});
    RC_ASSERT(gathered.Slice(s.start + s.count, s.start + most) == pad);
  }
}

RC_GTEST_PROP(EngineLayoutsProps, EverySglangRanksSliceIsItsRowsWithinTheBound, ()) {
  SglangLimits limits;
  limits.chunked_prefill_size = *rc::gen::inRange<int64_t>(1, 4097);
  limits.max_running_requests = *rc::gen::inRange<int64_t>(1, 1025);
  limits.tokens_per_request = *rc::gen::inRange<int64_t>(1, 5);
  const int64_t per_rank = std::max(limits.chunked_prefill_size,
                                    limits.max_running_requests * limits.tokens_per_request);
  SglangStep step;
  step.gather = *rc::gen::element(SglangGather::kSumLen, SglangGather::kMaxLen,
                                  SglangGather::kCudaGraph);
  step.tokens_per_request = limits.tokens_per_request;
  if (step.gather == SglangGather::kCudaGraph) {
    // A decode graph: every rank's requests fit the graph's batch.
    step.graph_bs = *rc::gen::inRange<int64_t>(1, limits.max_running_requests + 1);
    step.tokens = *rc::gen::container<std::vector<int64_t>>(
        *rc::gen::inRange(1, 9),
        rc::gen::map(rc::gen::inRange<int64_t>(0, step.graph_bs + 1),
                     [&](int64_t requests) { return requests * step.tokens_per_request; }));
  } else {
    step.tokens = *GenTokens(per_rank);
  }
  limits.dp = static_cast<int64_t>(step.tokens.size());
  const RowTensor gathered(SglangGathered(step));
  RC_ASSERT(gathered.rows() <= RequiredSglangRows(limits));
  for (size_t r = 0; r < step.tokens.size(); ++r) {
    const RowSlice s = SglangLocalRows(step, static_cast<int64_t>(r));
    RC_ASSERT(gathered.Slice(s.start, s.start + s.count) == Own(static_cast<int64_t>(r), step.tokens[r]));
  }
}

RC_GTEST_PROP(EngineLayoutsProps, AscendCapturesRightUnderAllGatherAndInTheShardBranch, ()) {
  const std::vector<int64_t> tokens = *GenTokens(64);
  const AscendComm comm =
      *rc::gen::element(AscendComm::kAllGather, AscendComm::kAllToAll, AscendComm::kMc2);
  const int64_t tp = comm == AscendComm::kAllGather ? 1 : *rc::gen::inRange<int64_t>(1, 9);
  const AscendStep step{tokens, tp, comm};
  bool any_wrong = false;
  for (int64_t r = 0; r < static_cast<int64_t>(tokens.size()); ++r) {
    for (int64_t t = 0; t < tp; ++t) {
      const AscendCapture c = AscendCaptureRows(step, r, t);
      const bool right = c.rows == Own(r, tokens[static_cast<size_t>(r)]);
      any_wrong = any_wrong || !right;
      if (comm == AscendComm::kAllGather || c.branch == AscendBranch::kShard) RC_ASSERT(right);
    }
  }
  RC_CLASSIFY(any_wrong, "a shard taken by an earlier test");
}

}  // namespace
}  // namespace r3::model
