// The steps of PlanDispatch (dispatch_plan.cc) that a dispatch mutant's
// edit, a row of the mutant catalogue (mutants.cc), may redo its own way.
#ifndef R3_SUT_INTERNAL_DISPATCH_STEPS_H_
#define R3_SUT_INTERNAL_DISPATCH_STEPS_H_

#include "r3/case/case.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/internal/dispatch.h"

namespace r3::sut::internal {

// Each rank's own rows: its SP shard (sequence_parallel_chunk), or its DP
// rank's whole batch; and local_sizes, which follow the same rounding. A
// rank's group is left as it is.
void PlanShards(const Case& c, DispatchPlan& plan, ShardRounding rounding);

// One group per TP index t: DP ranks 0..D-1 in order.
void PlanDpGroups(const Config& cfg, DispatchPlan& plan);

}  // namespace r3::sut::internal

#endif  // R3_SUT_INTERNAL_DISPATCH_STEPS_H_
