#include "r3/check/run_case.h"

#include <gtest/gtest.h>

#include "r3/case/checked_math.h"
#include "r3/case/limits.h"
#include "r3/model/sizing.h"
#include "tests/testing/test_case.h"

namespace r3::check {
namespace {

// The largest legal shape, ragged counts with SP padding everywhere.
Case LargestCase(Dispatch dispatch) {
  std::vector<int64_t> tokens(kMaxDp);
  for (int64_t d = 0; d < kMaxDp; ++d) tokens[d] = (d * 7919) % (kMaxBatchedTokens + 1);
  return testing::MakeCase({.dp = kMaxDp, .tp = kMaxTp, .dispatch = dispatch,
                            .max_num_batched_tokens = kMaxBatchedTokens, .tokens = tokens});
}

TEST(RunCaseTest, LargestNaiveCaseAgreesWithTheModel) {
  const Case c = LargestCase(Dispatch::kNaive);
  const CaseResult result = RunCase(c, {});
  EXPECT_TRUE(result.verdict.ok());
  int64_t gathered = 0;
  for (int64_t n : c.step.padded) gathered += kMaxTp * CeilDiv(n, kMaxTp);
  EXPECT_EQ(result.layout.kernel_rows, gathered);
  EXPECT_EQ(result.observation.kernel_rows, gathered);
  EXPECT_EQ(result.observation.ranks.size(), static_cast<size_t>(kMaxDp * kMaxTp));
  EXPECT_LE(gathered, model::RequiredReplayRows(c.config));
}

TEST(RunCaseTest, LargestInternalCaseAgreesWithTheModel) {
  const Case c = LargestCase(Dispatch::kInternal);
  const CaseResult result = RunCase(c, {});
  EXPECT_TRUE(result.PassesOrKnown());
  int64_t largest_shard = 0;
  for (int64_t n : c.step.padded) largest_shard = std::max(largest_shard, CeilDiv(n, kMaxTp));
  EXPECT_EQ(result.layout.kernel_rows, largest_shard);
  EXPECT_EQ(result.observation.kernel_rows, largest_shard);
}

TEST(RunCaseTest, KnownFindingsExplainOnlyTheirOwnViolations) {
  const CaseResult decode =
      RunCase(testing::MakeCase({.dispatch = Dispatch::kInternal, .tokens = {1, 1}}), {});
  ASSERT_FALSE(decode.verdict.ok());
  EXPECT_TRUE(decode.PassesOrKnown());
  for (const KnownFinding* f : decode.explained) {
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->id, "internal-sp-decode-pad");
  }
  // The same rows under naive dispatch are a real failure when a mutant breaks them.
  const CaseResult mutated = RunCase(testing::MakeCase({.tokens = {1, 1}}),
                                     {.mutants = sut::MutantSet(sut::Mutant::kNoSpTrim)});
  EXPECT_FALSE(mutated.PassesOrKnown());
}

TEST(RunCaseTest, CountsTheViolationsNoKnownFindingExplains) {
  // The decode-pad finding explains the internal step's row violations; the
  // int8 snapshot's dtype violation is explained by none.
  const CaseResult result =
      RunCase(testing::MakeCase({.dispatch = Dispatch::kInternal, .tokens = {1, 1}}),
              {.mutants = sut::MutantSet(sut::Mutant::kSnapshotInt8)});
  int explained = 0;
  for (const KnownFinding* f : result.explained) explained += f != nullptr ? 1 : 0;
  const int violations = static_cast<int>(result.verdict.violations.size());
  ASSERT_GT(explained, 0);
  ASSERT_LT(explained, violations);
  EXPECT_EQ(result.CountUnexplained(), violations - explained);
  EXPECT_FALSE(result.PassesOrKnown());
}

TEST(RunCaseTest, AnIdleStepHandsTheKernelNoRows) {
  // No DP rank scheduled a token: the model and the SUT both report an empty
  // kernel batch, which every replay buffer fits.
  const Case c = testing::MakeCase({.tokens = {0, 0}});
  const CaseResult result = RunCase(c, {});
  EXPECT_TRUE(result.verdict.ok());
  EXPECT_EQ(result.layout.kernel_rows, 0);
  EXPECT_EQ(result.observation.kernel_rows, 0);
}

}  // namespace
}  // namespace r3::check
