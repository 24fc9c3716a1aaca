// vllm-ascend's layouts and its capture (docs/layouts.md, "vllm-ascend"):
// which rows the MoE kernel of (DP rank r, TP rank t) sees under each
// communication type, and which of them vllm-ascend's capture() (patched
// over vLLM's) stores. The capture keeps this DP rank's T rows at [0, T)
// of its buffer and picks them by the first of four tests on the kernel's
// row count n. Pure functions of the token counts.
#ifndef R3_MODEL_ASCEND_LAYOUT_H_
#define R3_MODEL_ASCEND_LAYOUT_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "r3/case/rows.h"
#include "r3/model/padded_gather.h"

namespace r3::model {

enum class AscendComm {
  kAllGather,  // padded all-gather over DP: D * max(N) rows
  kAllToAll,   // SP: the rank's rows (at least tp of them) tensor_split over TP
  kMc2,        // SP: tp equal chunks of cdiv(max(N), tp) rows, padded
};

// Which of capture()'s tests took the rows, in the order it tries them.
enum class AscendBranch {
  kGlobal,  // n == sum(N): rows [sum(N[:r]), sum(N[:r]) + T)
  kLocal,   // n == T: rows [0, T)
  kPadded,  // n == D * max(N): rows [r * max(N), r * max(N) + T)
  kShard,   // otherwise an SP shard: gathered over TP, then rows [0, T)
};

std::string_view AscendBranchName(AscendBranch branch);

struct AscendStep {
  std::span<const int64_t> tokens;  // N[r] of every DP rank
  int64_t tp = 1;
  AscendComm comm = AscendComm::kAllGather;
};

// Rows the kernel of (rank, tp_rank) sees.
RowRuns AscendKernelRows(const AscendStep& step, int64_t rank, int64_t tp_rank);

struct AscendCapture {
  AscendBranch branch = AscendBranch::kGlobal;
  RowRuns rows;  // what the capture stores at [0, ...)
};

// What capture() on (rank, tp_rank) stores: the branch its tests pick on
// the kernel's rows, and the rows that branch takes (a shard branch
// gathers every TP rank's kernel rows in TP order first). Correct when
// rows == DP rank `rank`'s rows [0, T).
AscendCapture AscendCaptureRows(const AscendStep& step, int64_t rank, int64_t tp_rank);

}  // namespace r3::model

#endif  // R3_MODEL_ASCEND_LAYOUT_H_
