#include "r3/case/rows_json.h"

namespace r3 {

nlohmann::ordered_json RunsToJson(const RowRuns& runs) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  // The plain form: readers of the JSON (and its byte-for-byte approvals)
  // know no stride.
  ForEachPlainRun(runs, [&list](const RowRun& run) {
    if (run.is_pad()) {
      list.push_back({{"pad", run.count}});
    } else {
      list.push_back({{"dp", run.dp}, {"from", run.first}, {"count", run.count}});
    }
    return true;
  });
  return list;
}

}  // namespace r3
