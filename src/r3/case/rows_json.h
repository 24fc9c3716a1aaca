// The JSON notation of a run list, one notation everywhere (explain --json,
// the engine protocol): {"dp": d, "from": i, "count": c} or {"pad": c}.
#ifndef R3_CASE_ROWS_JSON_H_
#define R3_CASE_ROWS_JSON_H_

#include <nlohmann/json.hpp>

#include "r3/case/rows.h"

namespace r3 {

nlohmann::ordered_json RunsToJson(const RowRuns& runs);

}  // namespace r3

#endif  // R3_CASE_ROWS_JSON_H_
