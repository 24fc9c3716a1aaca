// vLLM's dispatch for one step, as a plan every producer of observations
// shares: which rows each rank holds before dispatch, which all-gather group
// it joins (members in group-rank order, ragged sizes), and so which
// `topk_ids` rows its router and capture see. The host SUT captures from it,
// the GPU path moves real rows along it, and the engine protocol sends each
// rank's rows from it, so a dispatch mutant is honoured by all three.
//
// A dispatch mutant is one row of the mutant catalogue (mutants.cc) of kind
// kDispatch: a name, a description and an edit of the correct plan made
// before its gathers run. Adding the row is all it takes; the CLI's
// --mutant, the host SUT, the GPU path and engine requests pick it up.
#ifndef R3_SUT_DISPATCH_PLAN_H_
#define R3_SUT_DISPATCH_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/case/rows.h"
#include "r3/sut/mutants.h"

namespace r3::sut {

struct RankDispatch {
  int64_t dp = 0;
  int64_t tp = 0;
  // The DP rank's rows as this rank holds them: N[dp], or under SP padded to
  // a multiple of TP (sequence_parallel_chunk). Rows past N[dp] are padding.
  int64_t held_rows = 0;
  // This rank's own rows are [shard_first, shard_first + shard_rows) of those.
  int64_t shard_first = 0;
  int64_t shard_rows = 0;
  RowRuns local;   // the same rows, symbolically
  int group = -1;  // index into DispatchPlan::groups; -1: the router sees `local`
};

struct GatherGroup {
  std::vector<int64_t> members;  // rank indices d*T + t, in group-rank order
  // all_gatherv sizes, one per member: its entry of local_sizes (set when
  // the plan's gathers run, so an edit of the members or of local_sizes
  // carries over).
  std::vector<int64_t> sizes;
  RowRuns rows;                  // the gathered tensor every member receives
};

struct DispatchPlan {
  bool sp = false;     // MoE sequence parallelism is on
  bool naive = false;  // AgRs all-gather before the kernel
  std::optional<std::vector<int64_t>> local_sizes;  // set when DP > 1
  std::vector<RankDispatch> ranks;                  // index d*T + t
  std::vector<GatherGroup> groups;
  // A member holding fewer rows than its size (only a mutant can cause it);
  // empty when the plan is consistent.
  std::string error;

  // The rows of `topk_ids` rank `index`'s router (and capture) receives.
  const RowRuns& Routed(size_t index) const;
};

DispatchPlan PlanDispatch(const Case& c, const MutantSet& mutants);

}  // namespace r3::sut

#endif  // R3_SUT_DISPATCH_PLAN_H_
