// A case's settings as JSON, under the r3case format's own field names
// (docs/case-format.md), for machine-readable reports (check/verify/minimize
// --json). The r3case text stays the one input format; this is output only.
#ifndef R3_CASE_CASE_JSON_H_
#define R3_CASE_CASE_JSON_H_

#include <nlohmann/json.hpp>

#include "r3/case/case.h"

namespace r3 {

// {"dp", "tp", "ep", "dispatch", "sp", "max_num_batched_tokens", "top_k",
//  "num_experts", "num_layers", "tokens", "padded"}; ep is a bool, dispatch
// and sp their r3case words.
nlohmann::ordered_json CaseToJson(const Case& c);

}  // namespace r3

#endif  // R3_CASE_CASE_JSON_H_
