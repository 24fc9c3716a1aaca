#include "r3/case/case.h"

#include <string>

#include "r3/case/case_fields.h"

namespace r3 {
namespace {

std::string RangeMessage(int64_t lo, int64_t hi) {
  return "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

bool InRange(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

}  // namespace

std::string_view DispatchName(Dispatch dispatch) {
  return Field(FieldId::kDispatch).choices[static_cast<size_t>(dispatch)];
}

std::string_view SpModeName(SpMode mode) {
  return Field(FieldId::kSp).choices[static_cast<size_t>(mode)];
}

std::string_view MoeCommName(MoeComm comm) {
  return Field(FieldId::kMoeComm).choices[static_cast<size_t>(comm)];
}

bool SpPossible(const Config& config) { return config.ep && config.tp > 1 && config.dp > 1; }

bool SpEnabled(const Config& config) { return config.sp != SpMode::kOff && SpPossible(config); }

FieldError ValidateCase(const Case& c) {
  const Config& cfg = c.config;
  for (const CaseField& field : CaseFields()) {
    if (field.kind == FieldKind::kInt && !InRange(field.get(c, 0), field.lo, field.hi)) {
      return {std::string(field.name), RangeMessage(field.lo, field.hi)};
    }
  }
  if (cfg.top_k > cfg.num_experts) return {"top_k", "must not exceed num_experts"};
  // A chunk larger than the step budget could never be scheduled.
  if (cfg.chunked_prefill_size > cfg.max_num_batched_tokens) {
    return {"chunked_prefill_size", "must not exceed max_num_batched_tokens (" +
                                        std::to_string(cfg.max_num_batched_tokens) + ")"};
  }
  // vllm-ascend's comm types replace vLLM's naive dispatch and its SP.
  if (cfg.moe_comm != MoeComm::kNone) {
    if (cfg.dispatch != Dispatch::kNaive) {
      return {"moe_comm", std::string(MoeCommName(cfg.moe_comm)) +
                              " replaces vLLM's dispatch: it needs dispatch naive"};
    }
    if (cfg.sp == SpMode::kOn) {
      return {"moe_comm", std::string(MoeCommName(cfg.moe_comm)) +
                              " shards by its own rule, not vLLM's SP: it cannot take sp on"};
    }
  }
  // Forcing SP on where vLLM cannot run it describes no real deployment.
  if (cfg.sp == SpMode::kOn && !SpPossible(cfg)) {
    return {"sp", "on needs ep on, tp > 1 and dp > 1"};
  }
  const auto dp = static_cast<size_t>(cfg.dp);
  if (c.step.tokens.size() != dp) {
    return {"tokens", "needs " + std::to_string(cfg.dp) + " values (one per DP rank), got " +
                          std::to_string(c.step.tokens.size())};
  }
  if (c.step.padded.size() != dp) {
    return {"padded", "needs " + std::to_string(cfg.dp) + " values (one per DP rank), got " +
                          std::to_string(c.step.padded.size())};
  }
  const int64_t m = cfg.max_num_batched_tokens;
  for (size_t d = 0; d < dp; ++d) {
    const int64_t t = c.step.tokens[d];
    const int64_t n = c.step.padded[d];
    if (t < 0) return {"tokens", "value " + std::to_string(d) + " is negative"};
    if (t > m) {
      return {"tokens", "value " + std::to_string(d) + " (" + std::to_string(t) +
                            ") exceeds max_num_batched_tokens " + std::to_string(m)};
    }
    if (n < t) {
      return {"padded", "value " + std::to_string(d) + " (" + std::to_string(n) +
                            ") is below tokens (" + std::to_string(t) + ")"};
    }
    if (n > m) {
      return {"padded", "value " + std::to_string(d) + " (" + std::to_string(n) +
                            ") exceeds max_num_batched_tokens " + std::to_string(m)};
    }
  }
  return {};
}

}  // namespace r3
