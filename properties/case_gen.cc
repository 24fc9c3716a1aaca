#include "properties/case_gen.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/case/limits.h"
#include "r3/case/step_shapes.h"

namespace r3::props {
namespace {

namespace gen = rc::gen;
using I = int64_t;

// A weighted choice between generators whose *index* shrinks toward the
// first option (gen::weightedOneOf picks without shrinking the choice).
template <typename T>
rc::Gen<T> Pick(std::vector<std::pair<int, rc::Gen<T>>> options) {
  int total = 0;
  for (const auto& option : options) total += option.first;
  return gen::mapcat(gen::resize(100, gen::inRange(0, total)),
                     [options = std::move(options)](int x) {
                       for (const auto& [weight, g] : options) {
                         if (x < weight) return g;
                         x -= weight;
                       }
                       return options.back().second;
                     });
}

template <typename T>
rc::Gen<T> Just(T value) {
  return gen::just(std::move(value));
}

// [lo, hi], shrinking toward lo.
rc::Gen<I> Range(I lo, I hi) { return gen::inRange<I>(lo, hi + 1); }

// 2^k for k in [lo, hi], shrinking toward 2^lo.
rc::Gen<I> PowerOfTwo(int lo, int hi) {
  return gen::map(gen::inRange(lo, hi + 1), [](int k) { return I{1} << k; });
}

// Odd values in [3, hi], shrinking toward 3.
rc::Gen<I> Odd(I hi) {
  return gen::map(Range(1, (hi - 1) / 2), [](I k) { return 2 * k + 1; });
}

// Small values, powers of two and odd sizes dominate; small ones shrink first.
rc::Gen<I> GenDp() {
  return Pick<I>({{4, Range(1, 4)},
                  {3, PowerOfTwo(0, 6)},
                  {2, Odd(kGenMaxDp - 1)},
                  {1, Range(1, kGenMaxDp)}});
}

rc::Gen<I> GenTp() {
  return Pick<I>({{3, Range(1, 2)}, {3, PowerOfTwo(0, 3)}, {2, Odd(7)}, {1, Range(1, kGenMaxTp)}});
}

rc::Gen<bool> Flag(int weight_false, int weight_true) {
  return Pick<bool>({{weight_false, Just(false)}, {weight_true, Just(true)}});
}

// Typical model sizes, the uint8 snapshot boundary region (129..256) and the
// int16 / uint16 boundaries; num_experts 8 is the shrink target.
rc::Gen<I> GenExperts() {
  static const std::vector<I> kTypical = {8, 16, 32, 64, 128, 256, 160, 384};
  static const std::vector<I> kEdges = {127,   128,   129,   255,   256,   257,
                                        32767, 32768, 32769, 65535, 65536, 65537};
  return Pick<I>({{3, gen::map(Range(0, 7), [](I i) { return kTypical[static_cast<size_t>(i)]; })},
                  {2, Range(129, 256)},
                  {2, Range(1, 128)},
                  {1, gen::map(Range(0, 11), [](I i) { return kEdges[static_cast<size_t>(i)]; })},
                  {1, Range(257, kMaxExperts)}});
}

rc::Gen<I> GenLayers() { return Pick<I>({{4, Range(1, 4)}, {1, Range(1, kMaxLayers)}}); }

rc::Gen<SpMode> GenSp(const Config& c) {
  // "on" is legal only where vLLM can turn SP on; elsewhere only auto/off.
  if (SpPossible(c)) {
    return Pick<SpMode>({{7, Just(SpMode::kAuto)}, {1, Just(SpMode::kOff)}, {2, Just(SpMode::kOn)}});
  }
  return Pick<SpMode>({{8, Just(SpMode::kAuto)}, {2, Just(SpMode::kOff)}});
}

// M (max_num_batched_tokens): small, powers of two, and values that TP does
// not divide (deployments use powers of two; bugs hide in the others).
rc::Gen<I> GenM(I tp) {
  std::vector<std::pair<int, rc::Gen<I>>> options = {
      {3, Range(1, 32)}, {2, PowerOfTwo(0, 20)}, {1, Range(1, kMaxBatchedTokens)}};
  if (tp > 1) {
    options.push_back({3, gen::mapcat(Range(1, tp - 1), [tp](I r) {
                         return gen::map(Pick<I>({{2, Range(0, 64)}, {1, Range(0, 8191)}}),
                                         [tp, r](I k) { return k * tp + r; });
                       })});
  }
  return Pick<I>(std::move(options));
}

rc::Gen<I> GenTopK(I num_experts) {
  return Pick<I>({{3, Range(1, std::min<I>(num_experts, 8))},
                  {1, Range(1, std::min<I>(num_experts, kMaxTopK))}});
}

// One rank's real token count in [0, m]: small, anything, or near full.
rc::Gen<I> GenCount(I m) {
  return Pick<I>({{3, Range(0, std::min<I>(m, 16))},
                  {2, Range(0, m)},
                  {1, gen::map(Range(0, std::min<I>(m, 4)), [m](I k) { return m - k; })}});
}

rc::Gen<std::vector<I>> PerRank(I dp, rc::Gen<I> g) {
  return gen::container<std::vector<I>>(static_cast<size_t>(dp), std::move(g));
}

rc::Gen<I> GenGraphSize(I m) {
  std::vector<I> sizes = CaptureSizesUpTo(m);
  std::vector<std::pair<int, rc::Gen<I>>> options;
  if (!sizes.empty()) {
    options.push_back({3, gen::map(Range(0, static_cast<I>(sizes.size()) - 1),
                                   [sizes](I i) { return sizes[static_cast<size_t>(i)]; })});
  }
  options.push_back({1, Just(m)});
  options.push_back({1, Range(1, m)});
  return Pick<I>(std::move(options));
}

}  // namespace

const CaseShape& GeneratorShape() {
  static const CaseShape shape =
      CaseShape().Set(FieldId::kDp, 1, kGenMaxDp).Set(FieldId::kTp, 1, kGenMaxTp);
  return shape;
}

rc::Gen<Step> GenStepOfKind(const Config& config, StepKind kind) {
  const I dp = config.dp;
  const I tp = config.tp;
  const I m = config.max_num_batched_tokens;
  switch (kind) {
    case StepKind::kEager:
      return gen::map(PerRank(dp, GenCount(m)), EagerStep);
    case StepKind::kDecode:
      return gen::map(PerRank(dp, Pick<I>({{6, Just<I>(1)}, {1, Just<I>(0)}})),
                      [](std::vector<I> t) { return UniformStep(std::move(t), 1); });
    case StepKind::kGraphPadded:
      return gen::mapcat(GenGraphSize(m), [dp](I n) {
        return gen::map(PerRank(dp, Pick<I>({{2, Just(n)}, {2, Range(0, n)}, {1, Just<I>(0)}})),
                        [n](std::vector<I> t) { return UniformStep(std::move(t), n); });
      });
    case StepKind::kWarmup:
      return Just(WarmupStep(dp, m));
    case StepKind::kZeroRanks: {
      // Each rank idle with probability 1/2 (rank 0 at least); the step runs
      // eager, or in graph mode where idle ranks pad a dummy batch.
      rc::Gen<I> count = Pick<I>({{1, Just<I>(0)}, {1, GenCount(m)}});
      return gen::mapcat(gen::pair(PerRank(dp, count), Flag(1, 1)), [m](const auto& p) {
        std::vector<I> tokens = p.first;
        tokens[0] = 0;
        if (!p.second) return Just(EagerStep(std::move(tokens)));
        const I top = *std::max_element(tokens.begin(), tokens.end());
        const I n = CaptureSizeFor(std::max<I>(top, 1), m).value_or(std::max<I>(top, 1));
        return Just(UniformStep(std::move(tokens), n));
      });
    }
    case StepKind::kNotDivisibleTp: {
      if (tp == 1) return gen::map(PerRank(dp, GenCount(m)), EagerStep);
      rc::Gen<I> count = gen::mapcat(Range(1, std::min(tp - 1, m)), [tp, m](I r) {
        const I kmax = (m - r) / tp;
        return gen::map(Pick<I>({{2, Range(0, std::min<I>(kmax, 4))}, {1, Range(0, kmax)}}),
                        [tp, r](I k) { return k * tp + r; });
      });
      return gen::map(PerRank(dp, count), EagerStep);
    }
    case StepKind::kRaggedPadded: {
      // Per rank: a real count and its own padded count (its capture size,
      // or anything up to M); ranks do not agree on one size.
      rc::Gen<std::pair<I, I>> rank = gen::mapcat(GenCount(m), [m](I t) {
        const I graph = CaptureSizeFor(t, m).value_or(t);
        return gen::map(Pick<I>({{1, Just(t)}, {2, Just(graph)}, {1, Range(t, m)}}),
                        [t](I n) { return std::make_pair(t, n); });
      });
      return gen::map(gen::container<std::vector<std::pair<I, I>>>(static_cast<size_t>(dp), rank),
                      [](const std::vector<std::pair<I, I>>& ranks) {
                        Step s;
                        for (const auto& [t, n] : ranks) {
                          s.tokens.push_back(t);
                          s.padded.push_back(n);
                        }
                        return s;
                      });
    }
    case StepKind::kLoneToken:
      // A lone decode request: where n == L == 1 and n == sum(N) make the
      // capture branches match by coincidence. The lone rank shrinks to 0.
      return gen::map(Range(0, dp - 1), [dp](I lone) { return LoneTokenStep(dp, lone); });
  }
  return gen::map(PerRank(dp, GenCount(m)), EagerStep);
}

rc::Gen<Step> GenStep(const Config& config) {
  auto of = [&config](StepKind k) { return GenStepOfKind(config, k); };
  return gen::resize(100, Pick<Step>({{3, of(StepKind::kEager)},
                                      {2, of(StepKind::kDecode)},
                                      {2, of(StepKind::kGraphPadded)},
                                      {3, of(StepKind::kWarmup)},
                                      {1, of(StepKind::kZeroRanks)},
                                      {2, of(StepKind::kNotDivisibleTp)},
                                      {1, of(StepKind::kRaggedPadded)},
                                      {1, of(StepKind::kLoneToken)}}));
}

rc::Gen<Config> GenConfig() {
  rc::Gen<Config> base = gen::build<Config>(
      gen::set(&Config::dp, GenDp()), gen::set(&Config::tp, GenTp()),
      gen::set(&Config::ep, Flag(1, 3)),
      gen::set(&Config::dispatch,
               Pick<Dispatch>({{7, Just(Dispatch::kNaive)}, {3, Just(Dispatch::kInternal)}})),
      gen::set(&Config::num_experts, GenExperts()), gen::set(&Config::num_layers, GenLayers()));
  return gen::resize(100, gen::mapcat(base, [](const Config& c) {
                       return gen::build(Just(c), gen::set(&Config::sp, GenSp(c)),
                                         gen::set(&Config::max_num_batched_tokens, GenM(c.tp)),
                                         gen::set(&Config::top_k, GenTopK(c.num_experts)));
                     }));
}

rc::Gen<Case> GenCase() {
  return gen::mapcat(GenConfig(), [](const Config& config) {
    return gen::map(GenStep(config), [config](Step step) { return Case{config, std::move(step)}; });
  });
}

}  // namespace r3::props
