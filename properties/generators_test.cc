// The generators are tested like any other code: every case they make is
// legal and survives the case format, the ranges are the spec's, and every
// step shape and class shows up.
#include "properties/case_gen.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/case_classes.h"
#include "r3/case/case_format.h"
#include "r3/case/limits.h"

namespace r3::props {
namespace {

RC_GTEST_PROP(Generators, EveryCaseIsLegal, ()) {
  const Case c = *GenCase();
  const FieldError error = ValidateCase(c);
  RC_ASSERT(error.field == "");
}

RC_GTEST_PROP(Generators, CasesRoundTripThroughTheCaseFormat, ()) {
  const Case c = *GenCase();
  const std::string text = PrintCase(c);
  RC_ASSERT(ParseCase(text, "<generated>") == c);
  RC_ASSERT(PrintCase(ParseCase(text, "<generated>")) == text);
}

RC_GTEST_PROP(Generators, CasesStayInTheGeneratorShape, ()) {
  const Case c = *GenCase();
  RC_ASSERT(GeneratorShape().Contains(c));
  RC_ASSERT(GeneratorShape().Range(FieldId::kDp).hi == kGenMaxDp);
  RC_ASSERT(GeneratorShape().Range(FieldId::kTp).hi == kGenMaxTp);
  if (c.config.sp == SpMode::kOn) RC_ASSERT(SpPossible(c.config));
}

// Each step kind, for any configuration, obeys its own shape.
RC_GTEST_PROP(Generators, StepKindsHaveTheirShape, ()) {
  const Config cfg = *GenConfig();
  const int64_t m = cfg.max_num_batched_tokens;
  const auto kind = static_cast<StepKind>(*rc::gen::inRange(0, 8));
  const Step s = *GenStepOfKind(cfg, kind);
  RC_ASSERT(ValidateCase(Case{cfg, s}).field == "");
  switch (kind) {
    case StepKind::kEager:
    case StepKind::kNotDivisibleTp:
      RC_ASSERT(s.padded == s.tokens);
      if (kind == StepKind::kNotDivisibleTp && cfg.tp > 1) {
        for (int64_t t : s.tokens) RC_ASSERT(t % cfg.tp != 0);
      }
      break;
    case StepKind::kDecode:
      for (size_t d = 0; d < s.tokens.size(); ++d) {
        RC_ASSERT(s.padded[d] == 1);
        RC_ASSERT(s.tokens[d] <= 1);
      }
      break;
    case StepKind::kGraphPadded:
      for (int64_t n : s.padded) RC_ASSERT(n == s.padded[0]);
      break;
    case StepKind::kWarmup:
      for (size_t d = 0; d < s.tokens.size(); ++d) {
        RC_ASSERT(s.tokens[d] == m);
        RC_ASSERT(s.padded[d] == m);
      }
      break;
    case StepKind::kZeroRanks:
      RC_ASSERT(s.tokens[0] == 0);
      break;
    case StepKind::kRaggedPadded:
      break;
    case StepKind::kLoneToken:
      RC_ASSERT(s.padded == s.tokens);
      RC_ASSERT(std::count(s.tokens.begin(), s.tokens.end(), 1) == 1);
      RC_ASSERT(std::count(s.tokens.begin(), s.tokens.end(), 0) == cfg.dp - 1);
      break;
  }
}

// Sampling without RapidCheck's runner: a fixed seed, many cases.
std::vector<Case> Sample(int count, uint64_t seed) {
  const rc::Gen<Case> gen = GenCase();
  rc::Random random(seed);
  std::vector<Case> out;
  for (int i = 0; i < count; ++i) out.push_back(gen(random.split(), 100).value());
  return out;
}

TEST(Generators, ProduceTheEdgesOfEveryRange) {
  bool dp1 = false, dp_max_region = false, dp_odd = false, tp1 = false, tp8 = false,
       tp_odd = false, ep_on = false, ep_off = false, internal = false, sp_on = false,
       sp_off = false, m_not_div = false, m_pow2 = false, int16_past = false, uint8_edge = false;
  for (const Case& c : Sample(/*count=*/3000, /*seed=*/7)) {
    const Config& cfg = c.config;
    dp1 |= cfg.dp == 1;
    dp_max_region |= cfg.dp > 32;
    dp_odd |= cfg.dp % 2 == 1 && cfg.dp > 1;
    tp1 |= cfg.tp == 1;
    tp8 |= cfg.tp == 8;
    tp_odd |= cfg.tp % 2 == 1 && cfg.tp > 1;
    ep_on |= cfg.ep;
    ep_off |= !cfg.ep;
    internal |= cfg.dispatch == Dispatch::kInternal;
    sp_on |= cfg.sp == SpMode::kOn;
    sp_off |= cfg.sp == SpMode::kOff;
    m_not_div |= cfg.tp > 1 && cfg.max_num_batched_tokens % cfg.tp != 0;
    m_pow2 |= cfg.max_num_batched_tokens >= 4096 &&
              (cfg.max_num_batched_tokens & (cfg.max_num_batched_tokens - 1)) == 0;
    int16_past |= cfg.num_experts > 32768;
    uint8_edge |= cfg.num_experts == 257 || cfg.num_experts == 256;
  }
  EXPECT_TRUE(dp1);
  EXPECT_TRUE(dp_max_region);
  EXPECT_TRUE(dp_odd);
  EXPECT_TRUE(tp1);
  EXPECT_TRUE(tp8);
  EXPECT_TRUE(tp_odd);
  EXPECT_TRUE(ep_on && ep_off);
  EXPECT_TRUE(internal);
  EXPECT_TRUE(sp_on && sp_off);
  EXPECT_TRUE(m_not_div);
  EXPECT_TRUE(m_pow2);
  EXPECT_TRUE(int16_past);
  EXPECT_TRUE(uint8_edge);
}

TEST(Generators, ProduceEveryCaseClass) {
  std::set<std::string> seen;
  for (const Case& c : Sample(/*count=*/2000, /*seed=*/11)) {
    for (const std::string& name : CaseClasses(c)) seen.insert(name);
  }
  for (const ClassFloor& floor : ClassFloors()) {
    EXPECT_TRUE(seen.count(std::string(floor.name))) << floor.name;
  }
  for (const ClassFloor& floor : RareClassFloors()) {
    EXPECT_TRUE(seen.count(std::string(floor.name))) << floor.name;
  }
  EXPECT_TRUE(seen.count("experts-past-int16"));
  EXPECT_TRUE(seen.count("uniform"));
}

TEST(Generators, SameSeedGivesTheSameCases) {
  EXPECT_EQ(Sample(/*count=*/50, /*seed=*/3), Sample(/*count=*/50, /*seed=*/3));
  EXPECT_NE(Sample(/*count=*/50, /*seed=*/3), Sample(/*count=*/50, /*seed=*/4));
}

// Shrinking goes toward the readable corner: RapidCheck's minimal case for
// "always fails" is DP 1, TP 1, EP off, naive, sp auto, M 1, no tokens.
TEST(Generators, ShrinkToTheSmallestReadableCase) {
  EXPECT_EQ(PrintCase(SmallestCase(GenCase(), /*seed=*/5)),
            "r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 1\n"
            "top_k 1\nnum_experts 8\nnum_layers 1\ntokens 0\n");
}

}  // namespace
}  // namespace r3::props
