// One property per invariant of the spec's section 8, each checked for every
// (dp, tp) rank against the default SUT (vllm-post-50874, policy pr50874),
// or the one R3_SUT / R3_POLICY / R3_MUTANT name.
// A violation that a known finding explains is accepted; anything else
// fails with the case in r3case format, the invariant, the rank, captured vs
// expected, and RapidCheck's RC_PARAMS="reproduce=..." line.
//
// Longer runs: RC_PARAMS="max_success=10000" ./build-props/properties/invariant_props_test
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "properties/case_gen.h"
#include "properties/invariant_property.h"
#include "r3/check/verdict.h"
#include "r3/model/sizing.h"
#include "r3/sut/replay_sizing.h"

namespace r3::props {
namespace {

using check::Invariant;

// R3_SUT / R3_POLICY / R3_MUTANT pick another SUT (docs/properties.md).
sut::Producer& kSutUnderTest = PropertyProducer();

RC_GTEST_PROP(Invariant1, KernelInputFitsTheReplayBuffer, ()) {
  InvariantHolds(Invariant::kReplayFits, kSutUnderTest);
}

RC_GTEST_PROP(Invariant2, CapturerBufferHoldsTheRanksRows, ()) {
  InvariantHolds(Invariant::kCapturerHolds, kSutUnderTest);
}

RC_GTEST_PROP(Invariant3, EveryRankCapturesExactlyItsDpRanksRows, ()) {
  InvariantHolds(Invariant::kRowsExact, kSutUnderTest);
}

RC_GTEST_PROP(Invariant4, DpCapturesConcatenateToTheGlobalBatch, ()) {
  InvariantHolds(Invariant::kConcatGlobal, kSutUnderTest);
}

RC_GTEST_PROP(Invariant5, TpRanksOfADpRankCaptureTheSameRows, ()) {
  InvariantHolds(Invariant::kTpAgree, kSutUnderTest);
}

RC_GTEST_PROP(Invariant6, ExpertIdsSurviveReplayAndSnapshotDtypes, ()) {
  InvariantHolds(Invariant::kDtype, kSutUnderTest);
}

RC_GTEST_PROP(Invariant7, GatherSizeAndLocalSizesAsSpecified, ()) {
  InvariantHolds(Invariant::kGatherSize, kSutUnderTest);
}

// Invariant 1's slack: the model's exact bound is never exceeded by any
// step, is reached by warmup, and each policy's rows relate to it as the
// spec says (pr50874 >= bound; tight == bound).
RC_GTEST_PROP(Invariant1, ExactBoundIsTightAndPoliciesRespectIt, ()) {
  const Case c = *GenCase();
  const int64_t bound = model::RequiredReplayRows(c.config);
  const check::CaseResult result = check::RunCase(c, kSutUnderTest.options());
  RC_ASSERT(result.observation.kernel_rows <= bound);
  const sut::MutantSet none;
  RC_ASSERT(sut::ReplayBufferRows(c.config, sut::Policy::kPr50874, none) >= bound);
  RC_ASSERT(sut::ReplayBufferRows(c.config, sut::Policy::kTight, none) == bound);
  Case warmup = c;
  warmup.step.tokens.assign(static_cast<size_t>(c.config.dp), c.config.max_num_batched_tokens);
  warmup.step.padded = warmup.step.tokens;
  RC_ASSERT(check::RunCase(warmup, kSutUnderTest.options()).observation.kernel_rows == bound);
  RC_TAG(bound == sut::ReplayBufferRows(c.config, sut::Policy::kPr50874, none)
             ? "pr50874 slack 0"
             : "pr50874 slack > 0");
}

}  // namespace
}  // namespace r3::props
