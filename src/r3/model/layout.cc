#include "r3/model/layout.h"

#include <algorithm>

#include "r3/case/checked_math.h"
#include "r3/model/ascend_layout.h"
#include "r3/model/sequence_parallel.h"

namespace r3::model {
namespace {

AscendComm AscendCommOf(MoeComm comm) {
  switch (comm) {
    case MoeComm::kAllToAll: return AscendComm::kAllToAll;
    case MoeComm::kMc2: return AscendComm::kMc2;
    default: return AscendComm::kAllGather;
  }
}

// vllm-ascend's comm types (ascend_layout.h): each rank's kernel rows by
// its comm type, no all_gatherv and so no local_sizes; the capture must
// still hold its DP rank's N[d] rows.
Layout BuildAscendLayout(const Case& c) {
  const Config& cfg = c.config;
  const AscendStep step{c.step.padded, cfg.tp, AscendCommOf(cfg.moe_comm)};
  Layout layout;
  layout.group = step.comm == AscendComm::kAllGather && cfg.dp > 1 ? GatherGroup::kDp
                                                                    : GatherGroup::kNone;
  layout.ranks.resize(static_cast<size_t>(CheckedMul(cfg.dp, cfg.tp)));
  for (int64_t d = 0; d < cfg.dp; ++d) {
    for (int64_t t = 0; t < cfg.tp; ++t) {
      RankLayout& r = layout.ranks[static_cast<size_t>(d * cfg.tp + t)];
      r.dp = d;
      r.tp = t;
      AppendRun(r.expected, {d, 0, c.step.padded[static_cast<size_t>(d)]});
      RowTensor seen(AscendKernelRows(step, d, t));
      // Ranks that see the same rows (the padded all-gather) share a tensor.
      if (!layout.tensors.empty() && layout.tensors.back().runs() == seen.runs()) {
        r.tensor = layout.tensors.size() - 1;
      } else {
        r.tensor = layout.tensors.size();
        layout.tensors.push_back(std::move(seen));
      }
      r.n = layout.tensors[r.tensor].rows();
      layout.kernel_rows = std::max(layout.kernel_rows, r.n);
    }
  }
  return layout;
}

}  // namespace

std::string_view GatherGroupName(GatherGroup group) {
  switch (group) {
    case GatherGroup::kNone: return "none";
    case GatherGroup::kDp: return "dp";
    case GatherGroup::kEp: return "ep";
  }
  return "none";
}

RowRuns SpShard(int64_t dp, int64_t tp, int64_t padded_tokens, int64_t tp_size) {
  const int64_t c = ShardRows(padded_tokens, tp_size);
  const int64_t begin = std::min(CheckedMul(tp, c), padded_tokens);
  const int64_t end = std::min(CheckedMul(tp + 1, c), padded_tokens);
  RowRuns runs;
  runs.reserve(2);
  AppendRun(runs, {dp, begin, end - begin});
  AppendRun(runs, {RowRun::kPad, 0, c - (end - begin)});
  return runs;
}

Layout BuildLayout(const Case& c) {
  if (c.config.moe_comm != MoeComm::kNone) return BuildAscendLayout(c);
  const Config& cfg = c.config;
  const std::vector<int64_t>& padded = c.step.padded;
  Layout layout;
  layout.sp = SpEnabled(cfg);
  layout.local_sizes = LocalSizes(c);
  const bool naive = cfg.dispatch == Dispatch::kNaive && (cfg.dp > 1 || layout.sp);
  layout.group = !naive ? GatherGroup::kNone : (layout.sp ? GatherGroup::kEp : GatherGroup::kDp);

  const int64_t num_ranks = CheckedMul(cfg.dp, cfg.tp);
  layout.ranks.resize(static_cast<size_t>(num_ranks));

  if (layout.group == GatherGroup::kDp) {
    // Every TP rank holds its DP rank's full batch; the DP group gathers them.
    RowRuns gathered;
    for (int64_t d = 0; d < cfg.dp; ++d) AppendRun(gathered, {d, 0, padded[d]});
    layout.tensors.emplace_back(std::move(gathered));
  } else if (layout.group == GatherGroup::kEp) {
    // The EP group gathers every SP shard, EP-rank (DP-major) order.
    RowRuns gathered;
    for (int64_t d = 0; d < cfg.dp; ++d) {
      for (int64_t t = 0; t < cfg.tp; ++t) AppendRuns(gathered, SpShard(d, t, padded[d], cfg.tp));
    }
    layout.tensors.emplace_back(std::move(gathered));
  }

  for (int64_t d = 0; d < cfg.dp; ++d) {
    for (int64_t t = 0; t < cfg.tp; ++t) {
      RankLayout& r = layout.ranks[static_cast<size_t>(d * cfg.tp + t)];
      r.dp = d;
      r.tp = t;
      AppendRun(r.expected, {d, 0, padded[d]});
      if (layout.group != GatherGroup::kNone) {
        r.tensor = 0;
      } else {
        RowRuns local;
        if (layout.sp) {
          local = SpShard(d, t, padded[d], cfg.tp);
        } else {
          AppendRun(local, {d, 0, padded[d]});
        }
        r.tensor = layout.tensors.size();
        layout.tensors.emplace_back(std::move(local));
      }
      r.n = layout.tensors[r.tensor].rows();
      layout.kernel_rows = std::max(layout.kernel_rows, r.n);
    }
  }
  return layout;
}

}  // namespace r3::model
