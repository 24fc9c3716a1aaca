#include "r3/case/case_json.h"

namespace r3 {

nlohmann::ordered_json CaseToJson(const Case& c) {
  const Config& cfg = c.config;
  return {{"dp", cfg.dp},
          {"tp", cfg.tp},
          {"ep", cfg.ep},
          {"dispatch", DispatchName(cfg.dispatch)},
          {"sp", SpModeName(cfg.sp)},
          {"max_num_batched_tokens", cfg.max_num_batched_tokens},
          {"top_k", cfg.top_k},
          {"num_experts", cfg.num_experts},
          {"num_layers", cfg.num_layers},
          {"tokens", c.step.tokens},
          {"padded", c.step.padded}};
}

}  // namespace r3
