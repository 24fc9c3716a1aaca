// A case: one deployment configuration plus one scheduler step. This is the
// unit every part of r3check produces, stores, and judges.
#ifndef R3_CASE_CASE_H_
#define R3_CASE_CASE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace r3 {

enum class Dispatch {
  kNaive,     // all-gather before the kernel (AgRsAll2AllManager)
  kInternal,  // the kernel combines DP itself; the router sees local rows
};

enum class SpMode { kAuto, kOn, kOff };

// vllm-ascend's MoE communication type (its MoECommType), which replaces
// vLLM's dispatch and lays the kernel's rows out its own way
// (model/ascend_layout.h). kNone: vLLM's own dispatch.
enum class MoeComm { kNone, kAllGather, kAllToAll, kMc2 };

struct Config {
  int64_t dp = 1;
  int64_t tp = 1;
  bool ep = false;
  Dispatch dispatch = Dispatch::kNaive;
  SpMode sp = SpMode::kAuto;
  int64_t max_num_batched_tokens = 1;
  int64_t top_k = 1;
  int64_t num_experts = 1;
  int64_t num_layers = 1;
  // SGLang's chunked prefill size per DP rank (its ServerArgs after the
  // division by dp), which sizes its capture buffer apart from the step
  // budget; 0: unset, the same as max_num_batched_tokens. vLLM has no such
  // limit (its chunk is max_num_batched_tokens) and ignores it.
  int64_t chunked_prefill_size = 0;
  // vllm-ascend's communication type; kNone for every other engine.
  MoeComm moe_comm = MoeComm::kNone;

  friend bool operator==(const Config&, const Config&) = default;
};

struct Step {
  std::vector<int64_t> tokens;  // real (scheduled) tokens per DP rank
  std::vector<int64_t> padded;  // N: per DP rank after CUDA-graph/DP padding

  friend bool operator==(const Step&, const Step&) = default;
};

struct Case {
  Config config;
  Step step;

  friend bool operator==(const Case&, const Case&) = default;
};

std::string_view DispatchName(Dispatch dispatch);
std::string_view SpModeName(SpMode mode);
std::string_view MoeCommName(MoeComm comm);

// The SP rule, the one copy r3check's own code uses (the SUTs transcribe
// vLLM's on their own, so that the model is checked against them): vLLM can
// run MoE sequence parallelism only with EP on, TP > 1 and DP > 1.
bool SpPossible(const Config& config);

// SP is on: possible and not switched off (`sp auto` and `sp on` alike).
bool SpEnabled(const Config& config);

// A field-level problem: which field, and what is wrong with it.
struct FieldError {
  std::string field;
  std::string message;
};

// Checks ranges (the field table's) and step legality (0 <= tokens[d] <= padded[d] <= M, SP
// forced on only where vLLM can turn it on). Returns the first problem, or an
// empty field name when the case is valid.
FieldError ValidateCase(const Case& c);

}  // namespace r3

#endif  // R3_CASE_CASE_H_
