#include "r3/model/ascend_layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "r3/case/checked_math.h"

namespace r3::model {
namespace {

// tokens is not empty: AscendKernelRows refuses a rank outside the step.
int64_t MostTokens(std::span<const int64_t> tokens) {
  return *std::max_element(tokens.begin(), tokens.end());
}

RowRuns OwnRows(int64_t rank, int64_t rows) {
  RowRuns out;
  AppendRun(out, {rank, 0, rows});
  return out;
}

// Rows [start, start + count) of DP rank `rank`'s T rows padded to `padded`.
RowRuns ShardOf(int64_t rank, int64_t real, int64_t start, int64_t count) {
  RowRuns out;
  const int64_t own = std::clamp<int64_t>(real - start, 0, count);
  AppendRun(out, {rank, start, own});
  AppendRun(out, {RowRun::kPad, 0, count - own});
  return out;
}

}  // namespace

std::string_view AscendBranchName(AscendBranch branch) {
  switch (branch) {
    case AscendBranch::kGlobal: return "global";
    case AscendBranch::kLocal: return "local";
    case AscendBranch::kPadded: return "padded";
    case AscendBranch::kShard: return "shard";
  }
  return "global";
}

RowRuns AscendKernelRows(const AscendStep& step, int64_t rank, int64_t tp_rank) {
  if (rank < 0 || rank >= static_cast<int64_t>(step.tokens.size()) || tp_rank < 0 ||
      tp_rank >= step.tp) {
    throw std::out_of_range("AscendKernelRows: rank " + std::to_string(rank) + ", tp rank " +
                            std::to_string(tp_rank) + " outside the step");
  }
  const int64_t real = step.tokens[static_cast<size_t>(rank)];
  switch (step.comm) {
    case AscendComm::kAllGather: {
      std::vector<RowRuns> members;
      for (size_t r = 0; r < step.tokens.size(); ++r) {
        members.push_back(OwnRows(static_cast<int64_t>(r), step.tokens[r]));
      }
      return PaddedAllGather(members);
    }
    case AscendComm::kAllToAll: {
      // Padded to at least tp rows, then tensor_split.
      const std::vector<int64_t> sizes = TensorSplitSizes(std::max(real, step.tp), step.tp);
      int64_t start = 0;
      for (int64_t t = 0; t < tp_rank; ++t) start += sizes[static_cast<size_t>(t)];
      return ShardOf(rank, real, start, sizes[static_cast<size_t>(tp_rank)]);
    }
    case AscendComm::kMc2: {
      const int64_t chunk = CeilDiv(MostTokens(step.tokens), step.tp);
      return ShardOf(rank, real, CheckedMul(tp_rank, chunk), chunk);
    }
  }
  return {};
}

AscendCapture AscendCaptureRows(const AscendStep& step, int64_t rank, int64_t tp_rank) {
  const RowTensor kernel(AscendKernelRows(step, rank, tp_rank));
  const int64_t n = kernel.rows();
  const int64_t real = step.tokens[static_cast<size_t>(rank)];
  int64_t before = 0;
  for (int64_t r = 0; r < rank; ++r) before += step.tokens[static_cast<size_t>(r)];
  int64_t sum = before;
  for (size_t r = static_cast<size_t>(rank); r < step.tokens.size(); ++r) sum += step.tokens[r];
  const int64_t most = MostTokens(step.tokens);
  const int64_t dp = static_cast<int64_t>(step.tokens.size());
  if (n == sum) return {AscendBranch::kGlobal, kernel.Slice(before, before + real)};
  if (n == real) return {AscendBranch::kLocal, kernel.Slice(0, real)};
  if (n == CheckedMul(dp, most)) {
    return {AscendBranch::kPadded, kernel.Slice(rank * most, rank * most + real)};
  }
  RowRuns gathered;
  for (int64_t t = 0; t < step.tp; ++t) AppendRuns(gathered, AscendKernelRows(step, rank, t));
  return {AscendBranch::kShard, RowTensor(gathered).Slice(0, real)};
}

}  // namespace r3::model
