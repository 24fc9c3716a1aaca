#include "fuzz/case_mutator.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "r3/case/case_shape.h"
#include "r3/case/limits.h"
#include "r3/case/step_shapes.h"

namespace r3::fuzz {
namespace {

int64_t Pick(Rng& rng, std::initializer_list<int64_t> values) {
  return *(values.begin() + rng.Below(static_cast<int64_t>(values.size())));
}

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t Pow2Near(Rng& rng) { return (int64_t{1} << rng.Between(0, 14)) + Pick(rng, {-1, 0, 0, 1}); }

// A count near a boundary that matters for this case: empty, one, M, a
// multiple of TP or one off it, a CUDA-graph size, or anything up to M.
int64_t CountNear(Rng& rng, const Case& c, int64_t current) {
  const int64_t m = c.config.max_num_batched_tokens;
  const int64_t t = c.config.tp;
  switch (rng.Below(9)) {
    case 0: return Pick(rng, {0, 1, 2, 3});
    case 1: return m - rng.Below(2);
    case 2: return current + Pick(rng, {-1, 1});
    case 3: return t * rng.Between(0, 8) + Pick(rng, {-1, 0, 1});
    case 4: return NextPow2(current) + Pick(rng, {-1, 0, 0, 1});
    case 5: return current * 2;
    case 6: return current / 2;
    case 7: return Pow2Near(rng);
    default: return rng.Between(0, m);
  }
}

void ResizeRanks(Case& c, int64_t dp, Rng& rng) {
  dp = std::clamp<int64_t>(dp, 1, kMutatorMaxDp);
  while (static_cast<int64_t>(c.step.tokens.size()) < dp) {
    // A new rank: idle, a copy of another rank, or at the limit.
    const size_t from = static_cast<size_t>(rng.Below(static_cast<int64_t>(c.step.tokens.size())));
    switch (rng.Below(3)) {
      case 0:
        c.step.tokens.push_back(0);
        c.step.padded.push_back(0);
        break;
      case 1:
        c.step.tokens.push_back(c.step.tokens[from]);
        c.step.padded.push_back(c.step.padded[from]);
        break;
      default:
        c.step.tokens.push_back(c.config.max_num_batched_tokens);
        c.step.padded.push_back(c.config.max_num_batched_tokens);
        break;
    }
  }
  if (rng.OneIn(2)) {  // drop ranks from the end or from the front
    c.step.tokens.resize(static_cast<size_t>(dp));
    c.step.padded.resize(static_cast<size_t>(dp));
  } else {
    const auto drop = static_cast<std::ptrdiff_t>(c.step.tokens.size() - static_cast<size_t>(dp));
    c.step.tokens.erase(c.step.tokens.begin(), c.step.tokens.begin() + drop);
    c.step.padded.erase(c.step.padded.begin(), c.step.padded.begin() + drop);
  }
  c.config.dp = dp;
}

void EditOnce(Case& c, Rng& rng) {
  Config& cfg = c.config;
  const size_t d = static_cast<size_t>(rng.Below(cfg.dp));
  switch (rng.Below(14)) {
    case 0:
      ResizeRanks(c, Pick(rng, {cfg.dp + 1, cfg.dp - 1, cfg.dp * 2, cfg.dp / 2, 1, 2, 3, 4, 8}), rng);
      break;
    case 1: cfg.tp = Pick(rng, {cfg.tp + 1, cfg.tp - 1, cfg.tp * 2, cfg.tp / 2, 1, 2, 3, 4, 8}); break;
    case 2: cfg.ep = !cfg.ep; break;
    case 3:
      cfg.dispatch = cfg.dispatch == Dispatch::kNaive ? Dispatch::kInternal : Dispatch::kNaive;
      break;
    case 4: cfg.sp = static_cast<SpMode>(rng.Below(3)); break;
    case 5: {  // M: near the largest padded count, a power of two, a TP multiple
      const int64_t top = *std::max_element(c.step.padded.begin(), c.step.padded.end());
      cfg.max_num_batched_tokens = Pick(rng, {top, top + 1, cfg.max_num_batched_tokens * 2,
                                              cfg.max_num_batched_tokens / 2, Pow2Near(rng),
                                              cfg.tp * rng.Between(1, 64) + Pick(rng, {-1, 0, 1}),
                                              8192, 1});
      break;
    }
    case 6:  // one rank's real tokens; padding follows when it must
      c.step.tokens[d] = CountNear(rng, c, c.step.tokens[d]);
      break;
    case 7:  // one rank's padded count
      c.step.padded[d] = rng.OneIn(3) ? c.step.tokens[d] : CountNear(rng, c, c.step.padded[d]);
      break;
    case 8: {  // CUDA-graph step: every rank padded to one capture size
      const int64_t top = *std::max_element(c.step.tokens.begin(), c.step.tokens.end());
      const int64_t size = rng.OneIn(2) ? NextPow2(top) : top + rng.Below(4);
      c.step = UniformStep(c.step.tokens, size);
      break;
    }
    case 9:  // eager step: no padding anywhere
      c.step = EagerStep(c.step.tokens);
      break;
    case 10: {  // decode or warmup: every rank at the same count
      const int64_t v = Pick(rng, {0, 1, 1, cfg.max_num_batched_tokens, cfg.tp, cfg.tp + 1});
      c.step = UniformStep(std::vector<int64_t>(c.step.tokens.size(), v), v);
      break;
    }
    case 11:
      cfg.num_experts = Pick(rng, {1, 8, 255, 256, 257, 32767, 32768, 32769, 65536, 65537,
                                   cfg.num_experts + 1, cfg.num_experts - 1, cfg.top_k});
      break;
    case 12: cfg.top_k = Pick(rng, {1, 2, 4, 8, cfg.top_k + 1, cfg.top_k - 1, cfg.num_experts}); break;
    default: cfg.num_layers = Pick(rng, {1, 2, 3, cfg.num_layers + 1, 61, kMaxLayers}); break;
  }
}

// The mutator's bounds as a shape of the case domain: its repair is the
// domain's clamp (limits, top_k <= experts, tokens <= padded <= M, SP on
// only where it can exist), with the least change.
const CaseShape& MutatorShape() {
  static const CaseShape shape = CaseShape()
                                     .Set(FieldId::kDp, 1, kMutatorMaxDp)
                                     .Set(FieldId::kTp, 1, kMutatorMaxTp)
                                     .Set(FieldId::kMaxNumBatchedTokens, 1, kMutatorMaxTokens);
  return shape;
}

void Repair(Case& c) { ClampToShape(c, MutatorShape()); }

}  // namespace

uint64_t Rng::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int64_t Rng::Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }

int64_t Rng::Between(int64_t lo, int64_t hi) { return lo + Below(hi - lo + 1); }

bool MutateCase(Case& c, Rng& rng) {
  if (c.step.tokens.empty() || c.step.tokens.size() != c.step.padded.size()) return false;
  if (c.config.dp > kMutatorMaxDp) ResizeRanks(c, kMutatorMaxDp, rng);
  const int64_t edits = rng.Between(1, 3);
  for (int64_t i = 0; i < edits; ++i) {
    EditOnce(c, rng);
    Repair(c);
  }
  return ValidateCase(c).field.empty();
}

Case RandomCase(Rng& rng) {
  Case c;
  c.config.dp = rng.Between(1, 4);
  c.config.tp = Pick(rng, {1, 2, 2, 3, 4});
  c.config.ep = rng.OneIn(2);
  c.config.dispatch = rng.OneIn(3) ? Dispatch::kInternal : Dispatch::kNaive;
  c.config.sp = SpMode::kAuto;
  c.config.max_num_batched_tokens = Pick(rng, {1, 4, 7, 8, 16, 64, 8192});
  c.config.num_experts = Pick(rng, {8, 256, 257});
  c.config.top_k = Pick(rng, {1, 2, 8});
  c.config.num_layers = 1;
  for (int64_t d = 0; d < c.config.dp; ++d) {
    const int64_t t = rng.Between(0, c.config.max_num_batched_tokens);
    c.step.tokens.push_back(t);
    c.step.padded.push_back(rng.OneIn(2) ? t : rng.Between(t, c.config.max_num_batched_tokens));
  }
  Repair(c);
  return c;
}

}  // namespace r3::fuzz
