#include "r3/gpu/plan.h"

#include <algorithm>

#include "r3/case/checked_math.h"
#include "r3/gpu/fill.h"
#include "r3/sut/internal/dispatch.h"
#include "r3/sut/replay_sizing.h"

namespace r3::gpu {
namespace {

using sut::Mutant;

GatherPlan MakeGather(std::vector<int> members, std::vector<int64_t> sizes, bool reversed) {
  GatherPlan g;
  g.members = std::move(members);
  g.sizes = std::move(sizes);
  g.offsets.assign(g.sizes.size(), 0);
  g.equal_sizes = !reversed;
  for (size_t i = 0; i < g.sizes.size(); ++i) {
    g.equal_sizes = g.equal_sizes && g.sizes[i] == g.sizes[0];
    g.total = CheckedAdd(g.total, g.sizes[i]);
  }
  // The gpu-gather-reversed mutant lays members out last-to-first.
  int64_t offset = 0;
  for (size_t j = 0; j < g.sizes.size(); ++j) {
    const size_t i = reversed ? g.sizes.size() - 1 - j : j;
    g.offsets[i] = offset;
    offset += g.sizes[i];
  }
  return g;
}

}  // namespace

Plan BuildPlan(const Case& c, const sut::Observation& host, const sut::MutantSet& mutants,
               uint64_t seed) {
  const Config& cfg = c.config;
  const bool sp = sut::internal::UseSequenceParallelMoe(cfg);
  const bool reversed = mutants.has(Mutant::kGpuGatherReversed);
  Plan plan;
  plan.top_k = cfg.top_k;
  plan.num_layers = cfg.num_layers;
  plan.capturer_rows = cfg.max_num_batched_tokens;
  plan.replay_rows = host.replay_rows;
  plan.id_space = FillIdSpace(cfg.num_experts);
  plan.layer = static_cast<int64_t>(seed % static_cast<uint64_t>(cfg.num_layers));
  plan.layer_stride_bug = mutants.has(Mutant::kGpuLayerStride);

  // Each rank's own rows: its SP shard (sequence_parallel_chunk), or its DP
  // rank's whole batch.
  const int64_t ranks = CheckedMul(cfg.dp, cfg.tp);
  plan.ranks.resize(static_cast<size_t>(ranks));
  for (int64_t d = 0; d < cfg.dp; ++d) {
    const int64_t n_d = c.step.padded[static_cast<size_t>(d)];
    const int64_t shard =
        sp ? sut::internal::ComputeSpNumTokens({n_d}, cfg.tp, mutants)[0] : n_d;
    for (int64_t t = 0; t < cfg.tp; ++t) {
      RankPlan& r = plan.ranks[static_cast<size_t>(d * cfg.tp + t)];
      r.dp = d;
      r.tp = t;
      r.real_rows = std::min(n_d, sp ? CheckedMul(shard, cfg.tp) : n_d);
      r.full_rows = sp ? CheckedMul(shard, cfg.tp) : n_d;
      r.local_first = sp ? t * shard : 0;
      r.local_rows = shard;
      r.n = shard;
    }
  }

  // The dispatch all-gather, in the group's rank order.
  if (sut::internal::UsesNaiveDispatch(cfg)) {
    const std::vector<int64_t>& local_sizes = *host.local_sizes;
    if (sp && !mutants.has(Mutant::kSpGatherDpGroup)) {
      const bool tp_major = mutants.has(Mutant::kTpMajorEpOrder);
      std::vector<int> members;
      std::vector<int64_t> sizes;
      for (int64_t e = 0; e < ranks; ++e) {
        const int64_t d = tp_major ? e % cfg.dp : e / cfg.tp;
        const int64_t t = tp_major ? e / cfg.dp : e % cfg.tp;
        const int idx = static_cast<int>(d * cfg.tp + t);
        members.push_back(idx);
        sizes.push_back(tp_major ? plan.ranks[static_cast<size_t>(idx)].local_rows
                                 : local_sizes[static_cast<size_t>(e)]);
      }
      plan.gathers.push_back(MakeGather(std::move(members), std::move(sizes), reversed));
      for (RankPlan& r : plan.ranks) r.group = 0;
    } else {
      for (int64_t t = 0; t < cfg.tp; ++t) {
        std::vector<int> members;
        std::vector<int64_t> sizes;
        for (int64_t d = 0; d < cfg.dp; ++d) {
          members.push_back(static_cast<int>(d * cfg.tp + t));
          sizes.push_back(local_sizes[static_cast<size_t>(sp ? d * cfg.tp + t : d)]);
        }
        plan.gathers.push_back(MakeGather(std::move(members), std::move(sizes), reversed));
        for (int64_t d = 0; d < cfg.dp; ++d) {
          plan.ranks[static_cast<size_t>(d * cfg.tp + t)].group = static_cast<int>(t);
        }
      }
    }
    for (const GatherPlan& g : plan.gathers) {
      for (size_t i = 0; i < g.members.size(); ++i) {
        RankPlan& r = plan.ranks[static_cast<size_t>(g.members[i])];
        if (r.local_rows < g.sizes[i]) {
          r.error = "gpu: all_gatherv member holds " + std::to_string(r.local_rows) +
                    " rows, size says " + std::to_string(g.sizes[i]);
        }
        r.n = g.total;
      }
    }
  }

  // Kernel buffer check and the host SUT's capture decision.
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    RankPlan& r = plan.ranks[i];
    const sut::RankObservation& h = host.ranks[i];
    r.replay_ok = r.n <= plan.replay_rows;
    r.capture = h.branch != sut::Branch::kError;
    r.tp_gather = h.branch == sut::Branch::kSpTpGather;
    r.capture_start = h.capture_start;
    r.capture_end = h.capture_end;
    if (h.n != r.n && r.error.empty()) {
      r.error = "gpu: the router saw " + std::to_string(r.n) + " rows, the host SUT " +
                std::to_string(h.n);
    }
    // Never let a bad slice become an out-of-bounds access on the device.
    const int64_t source_rows = r.tp_gather ? CheckedMul(r.n, cfg.tp) : r.n;
    if (r.capture && r.error.empty() &&
        (r.capture_start < 0 || r.capture_end < r.capture_start || r.capture_end > source_rows ||
         r.capture_end - r.capture_start > cfg.max_num_batched_tokens)) {
      r.error = "gpu: capture slice [" + std::to_string(r.capture_start) + ", " +
                std::to_string(r.capture_end) + ") outside the " + std::to_string(source_rows) +
                "-row tensor or the capturer buffer";
    }
    if (!r.error.empty()) r.capture = r.tp_gather = false;
  }

  // sp-tp-gather: a real all-gather over the TP group of each DP rank whose
  // TP ranks all reach it (the host SUT reports a hang otherwise).
  for (int64_t d = 0; d < cfg.dp; ++d) {
    std::vector<int> members;
    std::vector<int64_t> sizes;
    for (int64_t t = 0; t < cfg.tp; ++t) {
      const RankPlan& r = plan.ranks[static_cast<size_t>(d * cfg.tp + t)];
      if (!r.tp_gather) break;
      members.push_back(static_cast<int>(d * cfg.tp + t));
      sizes.push_back(r.n);
    }
    if (static_cast<int64_t>(members.size()) != cfg.tp) {
      for (int64_t t = 0; t < cfg.tp; ++t) {
        RankPlan& r = plan.ranks[static_cast<size_t>(d * cfg.tp + t)];
        if (r.tp_gather) r.capture = r.tp_gather = false;
      }
      continue;
    }
    plan.tp_gathers.push_back(MakeGather(std::move(members), std::move(sizes), reversed));
  }
  return plan;
}

}  // namespace r3::gpu
