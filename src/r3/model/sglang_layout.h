// SGLang's capture-then-slice contract (docs/layouts.md, "SGLang"): with DP
// attention the TopK layer sees the DP-gathered batch, capture() writes
// all of it at rows [0, n) of the device buffer, and after the forward a
// slice picks DP rank r's rows for the host. And the device buffer's exact
// bound. Pure functions of the step and the server's limits.
#ifndef R3_MODEL_SGLANG_LAYOUT_H_
#define R3_MODEL_SGLANG_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "r3/case/rows.h"
#include "r3/model/padded_gather.h"

namespace r3::model {

// How the DP ranks' tokens are gathered before the MoE layer.
enum class SglangGather {
  kSumLen,     // eager: concatenated, rank r at sum(N[:r])
  kMaxLen,     // eager: each rank padded to max(N), rank r at r * max(N)
  kCudaGraph,  // decode graph: each rank padded to graph_bs * tokens_per_request
};

struct SglangStep {
  std::vector<int64_t> tokens;     // N[r]: the rank's real tokens this step
  SglangGather gather = SglangGather::kSumLen;
  int64_t graph_bs = 0;            // the graph's batch size (kCudaGraph)
  int64_t tokens_per_request = 1;  // 1 + speculative tokens in a verify step
};

// What capture() writes at rows [0, n) on every GPU: the gathered batch.
RowRuns SglangGathered(const SglangStep& step);

// The rows the host gets for DP rank r (the slice of the gathered batch):
// its real tokens, at sum(N[:r]) (kSumLen), r * max(N) (kMaxLen), or
// r * graph_bs * tokens_per_request (kCudaGraph).
RowSlice SglangLocalRows(const SglangStep& step, int64_t rank);

// The server's per-DP-rank limits that bound a step.
struct SglangLimits {
  int64_t dp = 1;
  int64_t chunked_prefill_size = 0;  // per DP rank (ServerArgs divides it by dp)
  int64_t max_running_requests = 0;  // per DP rank
  int64_t tokens_per_request = 1;    // 1 + speculative tokens
};

// The most rows capture() can write in a legal step: every rank at its
// most tokens, max(chunked_prefill_size, max_running_requests *
// tokens_per_request), gathered over dp ranks.
int64_t RequiredSglangRows(const SglangLimits& limits);

}  // namespace r3::model

#endif  // R3_MODEL_SGLANG_LAYOUT_H_
