#include "r3/model/padded_gather.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "r3/case/checked_math.h"

namespace r3::model {

RowRuns PaddedAllGather(std::span<const RowRuns> members) {
  int64_t most = 0;
  for (const RowRuns& m : members) most = std::max(most, TotalRows(m));
  RowRuns out;
  for (const RowRuns& m : members) {
    AppendRuns(out, m);
    AppendRun(out, {RowRun::kPad, 0, most - TotalRows(m)});
  }
  return out;
}

RowSlice PaddedMemberRows(std::span<const int64_t> rows, size_t member) {
  if (member >= rows.size()) {
    throw std::out_of_range("PaddedMemberRows: member " + std::to_string(member) + " of " +
                            std::to_string(rows.size()));
  }
  const int64_t most = *std::max_element(rows.begin(), rows.end());
  return {CheckedMul(static_cast<int64_t>(member), most), rows[member]};
}

std::vector<int64_t> TensorSplitSizes(int64_t rows, int64_t parts) {
  std::vector<int64_t> sizes(static_cast<size_t>(parts), rows / parts);
  for (int64_t p = 0; p < rows % parts; ++p) ++sizes[static_cast<size_t>(p)];
  return sizes;
}

}  // namespace r3::model
