#include "r3/sample/case_sampler.h"

#include <algorithm>
#include <array>

namespace r3::sample {

int64_t CaseSampler::Uniform(int64_t lo, int64_t hi) {
  // std::uniform_int_distribution is implementation-defined; this is not.
  const auto span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>(rng_() % span);
}

bool CaseSampler::Chance(int percent) { return Uniform(1, 100) <= percent; }

Case CaseSampler::Next() {
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
  cfg.top_k = Uniform(1, std::min<int64_t>(8, cfg.num_experts));
  cfg.num_layers = Uniform(1, 4);

  const int64_t m = cfg.max_num_batched_tokens;
  const auto dp = static_cast<size_t>(cfg.dp);
  c.step.tokens.assign(dp, 0);
  c.step.padded.assign(dp, 0);
  switch (Uniform(0, 5)) {
    case 0:  // eager, ragged
      for (size_t d = 0; d < dp; ++d) {
        c.step.tokens[d] = Chance(15) ? 0 : Uniform(0, std::min<int64_t>(m, 40));
        c.step.padded[d] = c.step.tokens[d];
      }
      break;
    case 1: {  // CUDA graph: every rank padded to one capture size
      int64_t most = 0;
      for (size_t d = 0; d < dp; ++d) {
        c.step.tokens[d] = Uniform(0, std::min<int64_t>(m, 32));
        most = std::max(most, c.step.tokens[d]);
      }
      int64_t size = 1;
      while (size < most) size *= 2;
      size = std::min(size, m);
      for (size_t d = 0; d < dp; ++d) c.step.padded[d] = size;
      break;
    }
    case 2:  // decode: one token per rank
      for (size_t d = 0; d < dp; ++d) c.step.tokens[d] = c.step.padded[d] = 1;
      break;
    case 3:  // warmup: every rank at M
      for (size_t d = 0; d < dp; ++d) c.step.tokens[d] = c.step.padded[d] = m;
      break;
    case 4:  // one DP rank decodes a single token, every other rank idle
      c.step.tokens[static_cast<size_t>(Uniform(0, cfg.dp - 1))] = 1;
      c.step.padded = c.step.tokens;
      break;
    default:  // eager with idle ranks (dummy runs of zero tokens)
      for (size_t d = 0; d < dp; ++d) {
        c.step.tokens[d] = Chance(50) ? 0 : Uniform(1, std::min<int64_t>(m, 17));
        c.step.padded[d] = c.step.tokens[d];
      }
      break;
  }
  return c;
}

}  // namespace r3::sample
