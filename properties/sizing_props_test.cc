// Each sizing policy's replay-buffer rows, pinned to the spec's formula
// (section 6) for every combination of dispatch (naive/internal), EP
// (on/off) and SP (auto/off), not only checked against the exact bound: a
// policy that is safe but sized wrong (too big, or right for the wrong
// reason) fails here. The formulas are restated from the spec, not taken
// from r3::model or r3::sut; when SP is on (spec section 3) is the case
// layer's rule, r3::SpEnabled.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/case_gen.h"
#include "r3/check/run_case.h"
#include "r3/model/sizing.h"
#include "r3/sut/replay_sizing.h"

namespace r3::props {
namespace {

using sut::Policy;

int64_t Cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The rows the spec says each policy allocates.
int64_t ExpectedRows(const Config& c, Policy policy) {
  const int64_t m = c.max_num_batched_tokens;
  const int64_t d = c.dp;
  const int64_t t = c.tp;
  switch (policy) {
    case Policy::kLegacy:
      return m;
    case Policy::kPr50874:
      return m * (c.ep ? d * t : d);  // E = D*T with EP; without EP the EP size is ignored
    case Policy::kTight:
      // The warmup step's kernel rows (every DP rank at M).
      if (c.dispatch == Dispatch::kNaive) {
        if (SpEnabled(c)) return d * t * Cdiv(m, t);  // all_gatherv of local_sizes over the EP group
        return d > 1 ? d * m : m;                // over the DP group; no dispatch when D = 1
      }
      return SpEnabled(c) ? Cdiv(m, t) : m;  // internal: this rank's shard, or its N[d]
  }
  return -1;
}

struct Combination {
  Dispatch dispatch;
  bool ep;
  SpMode sp;
};

constexpr Combination kCombinations[] = {
    {Dispatch::kNaive, false, SpMode::kAuto},    {Dispatch::kNaive, false, SpMode::kOff},
    {Dispatch::kNaive, true, SpMode::kAuto},     {Dispatch::kNaive, true, SpMode::kOff},
    {Dispatch::kInternal, false, SpMode::kAuto}, {Dispatch::kInternal, false, SpMode::kOff},
    {Dispatch::kInternal, true, SpMode::kAuto},  {Dispatch::kInternal, true, SpMode::kOff},
};

constexpr Policy kPolicies[] = {Policy::kLegacy, Policy::kPr50874, Policy::kTight};

// Every generated configuration, re-checked under all eight combinations:
// ReplayBufferRows, and the replay buffer the SUT reports for a step.
RC_GTEST_PROP(Sizing, EveryPolicyAllocatesItsFormulasRowsUnderEveryCombination, ()) {
  const Config base = *GenConfig();
  for (const Combination& combo : kCombinations) {
    Config c = base;
    c.dispatch = combo.dispatch;
    c.ep = combo.ep;
    c.sp = combo.sp;
    Case idle{c, {}};
    idle.step.tokens.assign(static_cast<size_t>(c.dp), 0);
    idle.step.padded = idle.step.tokens;
    for (Policy policy : kPolicies) {
      const int64_t expected = ExpectedRows(c, policy);
      RC_ASSERT(sut::ReplayBufferRows(c, policy, {}) == expected);
      RC_ASSERT(check::RunCase(idle, {.policy = policy}).observation.replay_rows == expected);
    }
    RC_ASSERT(model::RequiredReplayRows(c) == ExpectedRows(c, Policy::kTight));
  }
  RC_TAG(base.tp > 1 && base.max_num_batched_tokens % base.tp != 0 ? "T does not divide M"
                                                                     : "T divides M");
}

// The seeded sizing bug differs from pr50874 exactly where EP is on and T > 1.
RC_GTEST_PROP(Sizing, SizeByDpWithEpUsesDEvenWithEp, ()) {
  const Config c = *GenConfig();
  const sut::MutantSet mutant(sut::Mutant::kSizeByDpWithEp);
  RC_ASSERT(sut::ReplayBufferRows(c, Policy::kPr50874, mutant) ==
            c.max_num_batched_tokens * c.dp);
}

// The spec's worked example (section 7): TP2/DP2, EP on, SP on, M = 8192.
TEST(Sizing, WorkedExample) {
  Config c;
  c.dp = 2;
  c.tp = 2;
  c.ep = true;
  c.max_num_batched_tokens = 8192;
  EXPECT_EQ(sut::ReplayBufferRows(c, Policy::kLegacy, {}), 8192);
  EXPECT_EQ(sut::ReplayBufferRows(c, Policy::kPr50874, {}), 32768);
  EXPECT_EQ(sut::ReplayBufferRows(c, Policy::kTight, {}), 16384);
  c.ep = false;
  EXPECT_EQ(sut::ReplayBufferRows(c, Policy::kPr50874, {}), 16384);
}

}  // namespace
}  // namespace r3::props
