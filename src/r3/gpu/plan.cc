#include "r3/gpu/plan.h"

#include <algorithm>

#include "r3/case/checked_math.h"
#include "r3/gpu/fill.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/replay_sizing.h"

namespace r3::gpu {
namespace {

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
  Plan plan;
  plan.top_k = cfg.top_k;
  plan.num_layers = cfg.num_layers;
  plan.capturer_rows = cfg.max_num_batched_tokens;
  plan.replay_rows = host.replay_rows;
  plan.id_space = FillIdSpace(cfg.num_experts);
  plan.layer = static_cast<int64_t>(seed % static_cast<uint64_t>(cfg.num_layers));
  for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
    if (!mutants.has(m.id)) continue;
    plan.capture_bugs |= m.capture_bug;
    plan.gather_bugs |= m.gather_bug;
  }
  const bool reversed = (plan.gather_bugs & sut::kReversedMembersBug) != 0;

  // Each rank's own rows and its dispatch all-gather come from the SUT
  // layer's plan, so every dispatch mutant holds here too.
  const sut::DispatchPlan dispatch = sut::PlanDispatch(c, mutants);
  plan.ranks.resize(dispatch.ranks.size());
  for (size_t i = 0; i < dispatch.ranks.size(); ++i) {
    const sut::RankDispatch& d = dispatch.ranks[i];
    RankPlan& r = plan.ranks[i];
    r.dp = d.dp;
    r.tp = d.tp;
    r.full_rows = d.held_rows;
    r.real_rows = std::min(c.step.padded[static_cast<size_t>(d.dp)], d.held_rows);
    r.local_first = d.shard_first;
    r.local_rows = d.shard_rows;
    r.n = TotalRows(dispatch.Routed(i));
    r.group = d.group;
  }
  for (const sut::GatherGroup& g : dispatch.groups) {
    std::vector<int> members(g.members.begin(), g.members.end());
    plan.gathers.push_back(MakeGather(std::move(members), g.sizes, reversed));
  }
  if (!dispatch.error.empty()) {
    for (RankPlan& r : plan.ranks) {
      if (r.group >= 0) r.error = "gpu: " + dispatch.error;
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
