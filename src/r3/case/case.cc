#include "r3/case/case.h"

#include <string>

#include "r3/case/limits.h"

namespace r3 {
namespace {

std::string RangeMessage(int64_t lo, int64_t hi) {
  return "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

bool InRange(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

}  // namespace

std::string_view DispatchName(Dispatch dispatch) {
  return dispatch == Dispatch::kNaive ? "naive" : "internal";
}

std::string_view SpModeName(SpMode mode) {
  switch (mode) {
    case SpMode::kAuto: return "auto";
    case SpMode::kOn: return "on";
    case SpMode::kOff: return "off";
  }
  return "auto";
}

FieldError ValidateCase(const Case& c) {
  const Config& cfg = c.config;
  if (!InRange(cfg.dp, 1, kMaxDp)) return {"dp", RangeMessage(1, kMaxDp)};
  if (!InRange(cfg.tp, 1, kMaxTp)) return {"tp", RangeMessage(1, kMaxTp)};
  if (!InRange(cfg.max_num_batched_tokens, 1, kMaxBatchedTokens)) {
    return {"max_num_batched_tokens", RangeMessage(1, kMaxBatchedTokens)};
  }
  if (!InRange(cfg.top_k, 1, kMaxTopK)) return {"top_k", RangeMessage(1, kMaxTopK)};
  if (!InRange(cfg.num_experts, 1, kMaxExperts)) {
    return {"num_experts", RangeMessage(1, kMaxExperts)};
  }
  if (cfg.top_k > cfg.num_experts) return {"top_k", "must not exceed num_experts"};
  if (!InRange(cfg.num_layers, 1, kMaxLayers)) {
    return {"num_layers", RangeMessage(1, kMaxLayers)};
  }
  // vLLM turns MoE sequence parallelism on only with EP, TP > 1 and DP > 1;
  // forcing it on elsewhere describes a deployment that cannot exist.
  if (cfg.sp == SpMode::kOn && !(cfg.ep && cfg.tp > 1 && cfg.dp > 1)) {
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
