#include "r3/case/layout_domain.h"

#include <string>

namespace r3 {

FieldError OutsideDomain(const LayoutDomain& domain, const Case& c, const std::string& who) {
  if (!domain.internal_dispatch && c.config.dispatch == Dispatch::kInternal) {
    return {"dispatch", "internal: " + who + " has no such layout (its router sees the DP-gathered batch); use naive"};
  }
  if (!domain.ascend_comm && c.config.moe_comm != MoeComm::kNone) {
    return {"moe_comm", std::string(MoeCommName(c.config.moe_comm)) +
                            " is vllm-ascend's layout; " + who + " runs vLLM's dispatch (moe_comm none)"};
  }
  if (!domain.vllm_dispatch && c.config.moe_comm == MoeComm::kNone) {
    return {"moe_comm", "none (vLLM's dispatch): " + who +
                            " lays rows out by its comm type; give allgather, alltoall or mc2"};
  }
  if (domain.internal_dispatch_tp1_only && c.config.dispatch == Dispatch::kInternal &&
      c.config.tp > 1) {
    return {"dispatch", "internal with tp " + std::to_string(c.config.tp) + ": " + who +
                            " drives it with tp 1 only; use naive or tp 1"};
  }
  if (!domain.sequence_parallel && SpEnabled(c.config)) {
    return {"sp", std::string(SpModeName(c.config.sp)) + " turns MoE sequence parallelism on, which " + who +
                      " does not have; use sp off"};
  }
  return {};
}

void FitToDomain(const LayoutDomain& domain, Case& c) {
  if (!domain.internal_dispatch ||
      (domain.internal_dispatch_tp1_only && c.config.tp > 1)) {
    c.config.dispatch = Dispatch::kNaive;
  }
  if (!domain.sequence_parallel && SpEnabled(c.config)) c.config.sp = SpMode::kOff;
  if (!domain.ascend_comm) c.config.moe_comm = MoeComm::kNone;
  if (!domain.vllm_dispatch && c.config.moe_comm == MoeComm::kNone) {
    c.config.moe_comm = MoeComm::kAllGather;
  }
  if (c.config.moe_comm != MoeComm::kNone) {
    c.config.dispatch = Dispatch::kNaive;
    if (c.config.sp == SpMode::kOn) c.config.sp = SpMode::kAuto;
  }
}

}  // namespace r3
