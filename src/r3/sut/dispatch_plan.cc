#include "r3/sut/dispatch_plan.h"

#include <algorithm>
#include <string>

#include "r3/case/checked_math.h"
#include "r3/sut/internal/dispatch.h"

namespace r3::sut {
namespace {

// all_gatherv: concatenates sizes[i] rows of each member, in member order.
// A member that holds fewer rows than its size is recorded in plan.error.
void Gather(DispatchPlan& plan, GatherGroup& group) {
  for (size_t i = 0; i < group.members.size(); ++i) {
    const RankDispatch& member = plan.ranks[static_cast<size_t>(group.members[i])];
    const int64_t held = member.shard_rows;
    if (held < group.sizes[i] && plan.error.empty()) {
      plan.error = "all_gatherv: member dp" + std::to_string(member.dp) + "/tp" +
                   std::to_string(member.tp) + " holds " + std::to_string(held) +
                   " rows, size says " + std::to_string(group.sizes[i]);
    }
    // The member's first sizes[i] rows (one or two runs).
    int64_t left = group.sizes[i];
    for (RowRun run : member.local) {
      run.count = std::min(run.count, left);
      left -= run.count;
      AppendRun(group.rows, run);
    }
  }
}

}  // namespace

const RowRuns& DispatchPlan::Routed(size_t index) const {
  const RankDispatch& r = ranks[index];
  return r.group < 0 ? r.local : groups[static_cast<size_t>(r.group)].rows;
}

DispatchPlan PlanDispatch(const Case& c, const MutantSet& mutants) {
  const Config& cfg = c.config;
  const std::vector<int64_t>& num_tokens = c.step.padded;
  DispatchPlan plan;
  plan.sp = internal::UseSequenceParallelMoe(cfg);
  plan.naive = internal::UsesNaiveDispatch(cfg);
  if (cfg.dp > 1) {
    plan.local_sizes = internal::ComputeSpNumTokens(num_tokens, plan.sp ? cfg.tp : 1, mutants);
  }

  // Each rank's own rows: its SP shard (sequence_parallel_chunk), or its DP
  // rank's whole batch.
  plan.ranks.resize(static_cast<size_t>(CheckedMul(cfg.dp, cfg.tp)));
  for (int64_t d = 0; d < cfg.dp; ++d) {
    const int64_t n_d = num_tokens[static_cast<size_t>(d)];
    for (int64_t t = 0; t < cfg.tp; ++t) {
      RankDispatch& r = plan.ranks[static_cast<size_t>(d * cfg.tp + t)];
      r.dp = d;
      r.tp = t;
      if (plan.sp) {
        r.local = internal::SequenceParallelChunk(d, n_d, t, cfg.tp, mutants);
        r.shard_rows = TotalRows(r.local);
        r.held_rows = CheckedMul(r.shard_rows, cfg.tp);
        r.shard_first = CheckedMul(t, r.shard_rows);
      } else {
        AppendRun(r.local, {d, 0, n_d});
        r.shard_rows = r.held_rows = n_d;
      }
    }
  }
  if (!plan.naive) return plan;

  const std::vector<int64_t>& local_sizes = *plan.local_sizes;
  if (plan.sp && !mutants.has(Mutant::kSpGatherDpGroup)) {
    // One EP group; member e is EP rank e = d*T + t (tp-major-ep-order: t*D + d).
    const bool tp_major = mutants.has(Mutant::kTpMajorEpOrder);
    GatherGroup& g = plan.groups.emplace_back();
    for (int64_t e = 0; e < CheckedMul(cfg.dp, cfg.tp); ++e) {
      const int64_t d = tp_major ? e % cfg.dp : e / cfg.tp;
      const int64_t t = tp_major ? e / cfg.dp : e % cfg.tp;
      const int64_t index = d * cfg.tp + t;
      g.members.push_back(index);
      g.sizes.push_back(tp_major ? plan.ranks[static_cast<size_t>(index)].shard_rows
                                 : local_sizes[static_cast<size_t>(e)]);
    }
    for (RankDispatch& r : plan.ranks) r.group = 0;
  } else {
    // The DP group of each TP index (under SP only with a mutant).
    for (int64_t t = 0; t < cfg.tp; ++t) {
      GatherGroup& g = plan.groups.emplace_back();
      for (int64_t d = 0; d < cfg.dp; ++d) {
        g.members.push_back(d * cfg.tp + t);
        g.sizes.push_back(local_sizes[static_cast<size_t>(plan.sp ? d * cfg.tp + t : d)]);
        plan.ranks[static_cast<size_t>(d * cfg.tp + t)].group = static_cast<int>(t);
      }
    }
  }
  for (GatherGroup& g : plan.groups) Gather(plan, g);
  return plan;
}

}  // namespace r3::sut
