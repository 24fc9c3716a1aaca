#include "r3/sample/case_sampler.h"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "r3/case/step_shapes.h"

namespace r3::sample {

int64_t CaseSampler::Uniform(int64_t lo, int64_t hi) {
  // std::uniform_int_distribution is implementation-defined; this is not.
  const auto span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(rng_() % span);
}

bool CaseSampler::Chance(int percent) { return Uniform(1, 100) <= percent; }

Case CaseSampler::Next() {
  Case c = NextVllm();
  FitToDomain(domain_, c);
  if (domain_.chunked_prefill && Chance(60)) {
    c.config.chunked_prefill_size = Uniform(1, c.config.max_num_batched_tokens);
  }
  if (domain_.ascend_comm) {
    // Each comm type alike; none (vLLM's dispatch) too where the domain has it.
    const int64_t lo = domain_.vllm_dispatch ? 0 : 1;
    c.config.moe_comm = static_cast<MoeComm>(Uniform(lo, 3));
    FitToDomain(domain_, c);
  }
  return c;
}

Case CaseSampler::NextVllm() {
  static constexpr std::array<int64_t, 8> kDp = {1, 2, 2, 3, 4, 5, 8, 16};
  static constexpr std::array<int64_t, 7> kTp = {1, 2, 2, 3, 4, 6, 8};
  static constexpr std::array<int64_t, 6> kM = {8192, 2048, 4096, 1000, 24, 7};
  Case c;
  Config& cfg = c.config;
  cfg.dp = kDp[static_cast<size_t>(Uniform(0, kDp.size() - 1))];
  cfg.tp = kTp[static_cast<size_t>(Uniform(0, kTp.size() - 1))];
  cfg.ep = Chance(70);
  cfg.dispatch = Chance(75) ? Dispatch::kNaive : Dispatch::kInternal;
  cfg.sp = Chance(85) ? SpMode::kAuto : SpMode::kOff;
  cfg.max_num_batched_tokens = Chance(50) ? kM[static_cast<size_t>(Uniform(0, kM.size() - 1))]
                                          : Uniform(1, 300);
  cfg.num_experts = Chance(90) ? std::array<int64_t, 4>{8, 64, 128, 256}[Uniform(0, 3)]
                               : Uniform(257, 70000);
  // A step's router scores, (tokens x experts), stay within 2^21: 8192
  // tokens at 256 experts, the most the common draws ask. The expert count
  // matters for the id dtypes, the token count for the sizing, and no rule
  // reads both; but an engine that keeps a dense (tokens, layers, experts)
  // map would spend gigabytes per rank on 8192 tokens at 70000 experts.
  // Clamped, not redrawn: every case of at most 256 experts stays as it was.
  constexpr int64_t kMaxScores = int64_t{1} << 21;
  cfg.max_num_batched_tokens = std::min(cfg.max_num_batched_tokens, kMaxScores / cfg.num_experts);
  cfg.top_k = Uniform(1, std::min<int64_t>(8, cfg.num_experts));
  cfg.num_layers = Uniform(1, 4);

  const int64_t m = cfg.max_num_batched_tokens;
  const auto dp = static_cast<size_t>(cfg.dp);
  std::vector<int64_t> tokens(dp, 0);
  switch (Uniform(0, 5)) {
    case 0:  // eager, ragged
      for (int64_t& t : tokens) t = Chance(15) ? 0 : Uniform(0, std::min<int64_t>(m, 40));
      c.step = EagerStep(std::move(tokens));
      break;
    case 1: {  // CUDA graph: every rank padded to one size, a power of two here
      for (int64_t& t : tokens) t = Uniform(0, std::min<int64_t>(m, 32));
      const int64_t most = *std::max_element(tokens.begin(), tokens.end());
      int64_t size = 1;
      while (size < most) size *= 2;
      c.step = UniformStep(std::move(tokens), std::min(size, m));
      break;
    }
    case 2:  // decode: one token per rank
      c.step = UniformStep(std::vector<int64_t>(dp, 1), 1);
      break;
    case 3:
      c.step = WarmupStep(cfg.dp, m);
      break;
    case 4:
      c.step = LoneTokenStep(cfg.dp, Uniform(0, cfg.dp - 1));
      break;
    default:  // eager with idle ranks (dummy runs of zero tokens)
      for (int64_t& t : tokens) t = Chance(50) ? 0 : Uniform(1, std::min<int64_t>(m, 17));
      c.step = EagerStep(std::move(tokens));
      break;
  }
  return c;
}

}  // namespace r3::sample
