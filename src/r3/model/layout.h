// The reference layout: for one case, which batch the MoE kernel and router
// of every (dp, tp) rank see, as symbolic rows, and which rows each rank
// must capture. Pure functions of the case; this is what vLLM should do.
#ifndef R3_MODEL_LAYOUT_H_
#define R3_MODEL_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "r3/case/case.h"
#include "r3/case/rows.h"

namespace r3::model {

// The group whose rows are all-gathered before the kernel.
enum class GatherGroup {
  kNone,  // no gather: the router sees local rows
  kDp,    // DP group of the rank's TP index, DP-rank order
  kEp,    // whole EP group, EP-rank (d*T + t) order
};

std::string_view GatherGroupName(GatherGroup group);

struct RankLayout {
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t n = 0;        // rows of topk_ids the rank's capture receives
  size_t tensor = 0;    // index into Layout::tensors of what the router sees
  RowRuns expected;     // rows the capture must copy: DP rank dp's N[dp] rows
};

struct Layout {
  bool sp = false;
  GatherGroup group = GatherGroup::kNone;
  std::optional<std::vector<int64_t>> local_sizes;
  // Distinct router-visible tensors; ranks that see the same gathered batch
  // share one entry.
  std::vector<RowTensor> tensors;
  std::vector<RankLayout> ranks;  // index d*T + t
  int64_t kernel_rows = 0;        // max n over ranks: what the replay buffer must hold now

  const RankLayout& rank(int64_t dp, int64_t tp, int64_t tp_size) const {
    return ranks[static_cast<size_t>(dp * tp_size + tp)];
  }
  const RowTensor& seen_by(const RankLayout& r) const { return tensors[r.tensor]; }
};

Layout BuildLayout(const Case& c);

// The rows of DP rank d's SP shard t: [t*c, (t+1)*c) of its N[d] rows, the
// part past N[d] being padding.
RowRuns SpShard(int64_t dp, int64_t tp, int64_t padded_tokens, int64_t tp_size);

}  // namespace r3::model

#endif  // R3_MODEL_LAYOUT_H_
