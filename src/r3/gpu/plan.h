// Host-side plan of one case's GPU step: what each rank holds, which group
// it all-gathers with (sizes, order), what the stand-in kernel and the capture
// do. Dispatch is the SUT layer's plan (sut::PlanDispatch, mutants included);
// the capture branch and slice come from the host SUT's observation.
#ifndef R3_GPU_PLAN_H_
#define R3_GPU_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/sut/gpu_bugs.h"
#include "r3/sut/mutants.h"
#include "r3/sut/observation.h"

namespace r3::gpu {

struct RankPlan {
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t full_rows = 0;    // DP rank dp's rows as the rank holds them (SP-padded)
  int64_t real_rows = 0;    // N[dp]; rows past it are SP padding (poison)
  int64_t local_first = 0;  // this rank's rows: full[local_first, +local_rows)
  int64_t local_rows = 0;
  int group = -1;           // dispatch all-gather group, -1: the router sees local rows
  int64_t n = 0;            // rows of topk_ids the router (and capture) sees
  bool replay_ok = false;   // n fits the replay buffer: the stand-in kernel runs
  bool capture = false;     // the host SUT's branch captured rows
  bool tp_gather = false;   // sp-tp-gather: all-gather over the TP group first
  int64_t capture_start = 0;
  int64_t capture_end = 0;
  std::string error;        // a disagreement between GPU plan and host SUT
};

struct GatherPlan {
  std::vector<int> members;       // rank indices (d*T + t), group-rank order
  std::vector<int64_t> sizes;     // rows each member contributes
  std::vector<int64_t> offsets;   // output row where each member's rows land
  int64_t total = 0;
  bool equal_sizes = false;       // ncclAllGather instead of grouped broadcasts
};

struct Plan {
  int64_t top_k = 0;
  int64_t num_layers = 0;
  int64_t capturer_rows = 0;  // M
  int64_t replay_rows = 0;
  int64_t id_space = 0;
  int64_t layer = 0;          // the MoE layer whose capture is checked
  // The GPU-only mutants on, as the bits of their catalogue rows: the
  // capture kernel's (sut::CaptureBug) and the all-gathers' (sut::GatherBug).
  int32_t capture_bugs = sut::kNoCaptureBug;
  int32_t gather_bugs = sut::kNoGatherBug;
  std::vector<RankPlan> ranks;      // index d*T + t
  std::vector<GatherPlan> gathers;  // dispatch groups
  std::vector<GatherPlan> tp_gathers;  // per DP rank whose TP ranks all gather
};

Plan BuildPlan(const Case& c, const sut::Observation& host, const sut::MutantSet& mutants,
               uint64_t seed);

}  // namespace r3::gpu

#endif  // R3_GPU_PLAN_H_
