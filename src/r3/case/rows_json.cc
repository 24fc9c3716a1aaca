#include "r3/case/rows_json.h"

namespace r3 {

nlohmann::ordered_json RunsToJson(const RowRuns& runs) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const RowRun& run : runs) {
    if (run.is_pad()) {
      list.push_back({{"pad", run.count}});
    } else {
      list.push_back({{"dp", run.dp}, {"from", run.first}, {"count", run.count}});
    }
  }
  return list;
}

}  // namespace r3
