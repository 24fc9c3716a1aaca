// The layouts a producer of observations models (a producer, sut/producer.h,
// says which). The host SUT and the GPU path model all of vLLM's; an engine
// only those its code has. SGLang has no MoE sequence parallelism; its TopK
// sees the DP-gathered batch (naive dispatch) or, under DeepEP, the rank's
// own tokens (internal dispatch), which r3check drives with attention TP 1
// only (with more, each attention-TP rank holds a scattered shard, not
// modelled). A case outside them describes no deployment of the engine and
// would judge it on a layout it never runs.
#ifndef R3_CASE_LAYOUT_DOMAIN_H_
#define R3_CASE_LAYOUT_DOMAIN_H_

#include "r3/case/case.h"

namespace r3 {

struct LayoutDomain {
  bool internal_dispatch = true;  // cases with dispatch internal
  bool internal_dispatch_tp1_only = false;  // ... and only with tp 1
  bool sequence_parallel = true;  // cases where SP is on
  // The engine sizes by a chunked prefill size of its own
  // (Config::chunked_prefill_size): generated cases draw one.
  bool chunked_prefill = false;
  // corpus/findings/ pins findings in vLLM's code: another engine's code
  // need not have them, so its verify does not run them.
  bool vllm_findings = true;
  // vLLM's own dispatch (moe_comm none), and vllm-ascend's comm types
  // (moe_comm set: allgather, alltoall, mc2), which only vllm-ascend runs.
  bool vllm_dispatch = true;
  bool ascend_comm = false;

  friend bool operator==(const LayoutDomain&, const LayoutDomain&) = default;
};

// The first field that takes `c` out of `domain` and why, or an empty field
// name when the domain has the case's layout. `who` names the producer in
// the message ("sglang").
FieldError OutsideDomain(const LayoutDomain& domain, const Case& c, const std::string& who);

// Brings a generated case into `domain` with the least change: naive
// dispatch where internal is not modelled, SP off where SP is not, the
// all-gather comm where vLLM's dispatch is not (and none where vllm-ascend's
// is not).
void FitToDomain(const LayoutDomain& domain, Case& c);

}  // namespace r3

#endif  // R3_CASE_LAYOUT_DOMAIN_H_
