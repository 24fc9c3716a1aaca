// Each invariant fires on the corruption it exists for, and only then.
#include "r3/check/invariants.h"

#include <gtest/gtest.h>

#include "r3/sut/sut.h"
#include "tests/testing/test_case.h"

namespace r3::check {
namespace {

using ::r3::testing::MakeCase;

// (invariant, (dp, tp)) of each violation, in report order.
using Places = std::vector<std::pair<Invariant, std::pair<int64_t, int64_t>>>;

class InvariantsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    case_ = MakeCase({.tokens = {5, 3}});
    layout_ = model::BuildLayout(case_);
    obs_ = sut::RunSut(case_, {});
  }

  Verdict Judge() const { return CheckInvariants(case_, layout_, obs_); }
  sut::RankObservation& Rank(int64_t dp, int64_t tp) { return obs_.ranks[dp * 2 + tp]; }

  Places Where() const {
    Places out;
    for (const Violation& v : Judge().violations) out.push_back({v.invariant, {v.dp, v.tp}});
    return out;
  }

  Case case_;
  model::Layout layout_;
  sut::Observation obs_;
};

TEST_F(InvariantsTest, CorrectObservationPasses) { EXPECT_TRUE(Judge().ok()); }

TEST_F(InvariantsTest, ReplayBufferTooSmall) {
  obs_.replay_rows = 9;
  // Every rank's kernel gets 10 rows.
  ASSERT_EQ(Where(), (Places{{Invariant::kReplayFits, {0, 0}},
                            {Invariant::kReplayFits, {0, 1}},
                            {Invariant::kReplayFits, {1, 0}},
                            {Invariant::kReplayFits, {1, 1}}}));
  EXPECT_NE(Judge().violations[0].message.find("did not notice"), std::string::npos);
}

TEST_F(InvariantsTest, ReplayBufferTooSmallForOneRanksKernelInput) {
  // The SUT handed one rank's kernel more rows than the model says it gets.
  obs_.replay_rows = 10;
  Rank(1, 0).n = 11;
  Rank(1, 0).replay_error = "ValueError: Routing replay buffer was initialized for 10 tokens";
  const Verdict v = Judge();
  ASSERT_EQ(Where(), (Places{{Invariant::kGatherSize, {1, 0}}, {Invariant::kReplayFits, {1, 0}}}));
  EXPECT_NE(v.violations[1].message.find("; ValueError"), std::string::npos)
      << v.violations[1].message;
}

// An engine's own sizing code reports each rank's buffer; it, not the
// observation's built-in policy rows, is what the rank's kernel input must fit.
TEST_F(InvariantsTest, AnEnginesPerRankBufferIsWhatMustFit) {
  ASSERT_GE(obs_.replay_rows, 10);
  Rank(1, 0).replay_rows = 9;
  ASSERT_EQ(Where(), (Places{{Invariant::kReplayFits, {1, 0}}}));
  EXPECT_NE(Judge().violations[0].message.find("replay buffer of 9 rows"), std::string::npos)
      << Judge().violations[0].message;
  Rank(1, 0).replay_rows = 10;  // n == rows fits
  EXPECT_TRUE(Judge().ok());
  // A per-rank buffer larger than the policy's holds a rank the policy would not.
  obs_.replay_rows = 9;
  for (sut::RankObservation& r : obs_.ranks) r.replay_rows = 10;
  EXPECT_TRUE(Judge().ok());
}

TEST_F(InvariantsTest, AShortKernelSliceIsAViolationThoughNothingRaised) {
  // The sink era: the kernel takes buffer[:n] of a buffer with fewer rows.
  for (sut::RankObservation& r : obs_.ranks) {
    r.replay_rows = 8;
    r.kernel_slice_rows = 8;
  }
  ASSERT_EQ(Where(), (Places{{Invariant::kReplayFits, {0, 0}},
                            {Invariant::kReplayFits, {0, 1}},
                            {Invariant::kReplayFits, {1, 0}},
                            {Invariant::kReplayFits, {1, 1}}}));
  const std::string message = Judge().violations[0].message;
  EXPECT_NE(message.find("; the kernel got a slice of 8 rows for its 10 input rows: the sink "
                         "buffer is too small and nothing raised"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("did not notice"), std::string::npos) << message;
  // A buffer that holds n, sliced short anyway by the hand-off.
  for (sut::RankObservation& r : obs_.ranks) {
    r.replay_rows = 100;
    r.kernel_slice_rows = 10;
  }
  EXPECT_TRUE(Judge().ok());
  Rank(0, 1).kernel_slice_rows = 9;
  ASSERT_EQ(Where(), (Places{{Invariant::kReplayFits, {0, 1}}}));
  EXPECT_NE(Judge().violations[0].message.find(
                "dp0/tp1: the kernel got a slice of 9 rows for its 10 input rows out of the "
                "replay buffer of 100 rows"),
            std::string::npos)
      << Judge().violations[0].message;
  // A slice longer than n (the monolithic kernel gets the whole buffer) is fine.
  Rank(0, 1).kernel_slice_rows = 100;
  EXPECT_TRUE(Judge().ok());
}

TEST_F(InvariantsTest, ABufferCheckThatRaisesOnAFittingInputIsAViolation) {
  Rank(0, 0).replay_rows = 100;
  Rank(0, 0).replay_error = "ValueError: Routing replay buffer was initialized for 100 tokens "
                            "on cpu, but the kernel received 10 tokens on cuda:0.";
  ASSERT_EQ(Where(), (Places{{Invariant::kReplayFits, {0, 0}}}));
  EXPECT_NE(Judge().violations[0].message.find("dp0/tp0: kernel input of 10 rows fits the replay "
                                               "buffer of 100 rows"),
            std::string::npos)
      << Judge().violations[0].message;
}

TEST_F(InvariantsTest, CapturerBufferTooSmall) {
  obs_.capturer_rows = 4;
  EXPECT_EQ(Where(), (Places{{Invariant::kCapturerHolds, {0, -1}}}));
  obs_.capturer_rows = 2;  // L = 5 and L = 3 both exceed it
  EXPECT_EQ(Where(), (Places{{Invariant::kCapturerHolds, {0, -1}},
                            {Invariant::kCapturerHolds, {1, -1}}}));
  obs_.capturer_rows = 5;  // L == rows fits
  EXPECT_TRUE(Judge().ok());
}

TEST_F(InvariantsTest, PaddingRowCapturedOnOneTpRank) {
  Rank(0, 1).captured = {{RowRun::kPad, 0, 1}, {0, 1, 4}};
  ASSERT_EQ(Where(), (Places{{Invariant::kRowsExact, {0, 1}},
                            {Invariant::kConcatGlobal, {-1, 1}},
                            {Invariant::kTpAgree, {0, 1}}}));
  const Violation first = Judge().violations[0];
  EXPECT_TRUE(first.has_rows);
  EXPECT_EQ(DescribeRuns(first.expected), "dp0[0..5)");
  EXPECT_NE(first.message.find("captured pad1 dp0[1..5)"), std::string::npos) << first.message;
}

// A capture scattered row by row: the message lists 32 runs and says what
// is left; the violation keeps every run.
TEST_F(InvariantsTest, AScatteredCaptureHasAReadableMessage) {
  case_ = MakeCase({.tokens = {40, 3}});
  layout_ = model::BuildLayout(case_);
  obs_ = sut::RunSut(case_, {});
  RowRuns scattered;
  for (int64_t i = 0; i < 40; ++i) AppendRun(scattered, {0, (i * 7) % 40, 1});
  Rank(0, 0).captured = scattered;
  const Verdict v = Judge();
  ASSERT_FALSE(v.violations.empty());
  ASSERT_EQ(v.violations[0].invariant, Invariant::kRowsExact);
  EXPECT_EQ(v.violations[0].captured, scattered);
  const std::string& m = v.violations[0].message;
  EXPECT_NE(m.find(" ... and 8 more runs (8 rows), expected dp0[0..40)"), std::string::npos) << m;
  EXPECT_NE(m.find(" dp0[17..18) ... and 8"), std::string::npos) << m;  // run 32: (31 * 7) % 40
}

TEST_F(InvariantsTest, CaptureErrorIsARowsViolation) {
  for (int64_t t = 0; t < 2; ++t) {
    Rank(1, t).captured.clear();
    Rank(1, t).error = "AssertionError: boom";
  }
  EXPECT_EQ(Where(), (Places{{Invariant::kRowsExact, {1, 0}},
                            {Invariant::kRowsExact, {1, 1}},
                            {Invariant::kConcatGlobal, {-1, 0}},
                            {Invariant::kConcatGlobal, {-1, 1}}}));
}

TEST_F(InvariantsTest, ExpertIdsMustSurviveBothDtypes) {
  obs_.snapshot_max_id = 127;
  ASSERT_EQ(Where(), (Places{{Invariant::kDtype, {-1, -1}}}));
  EXPECT_EQ(Judge().violations[0].dtype, DtypeBuffer::kSnapshot);
  case_.config.num_experts = 40000;
  obs_.snapshot_max_id = 65535;
  ASSERT_EQ(Where(), (Places{{Invariant::kDtype, {-1, -1}}}));
  EXPECT_EQ(Judge().violations[0].dtype, DtypeBuffer::kReplay);
  EXPECT_NE(Judge().violations[0].message.find("replay dtype int16"), std::string::npos);
  obs_.snapshot_max_id = 255;  // both at once: replay first, then snapshot
  const Verdict v = Judge();
  ASSERT_EQ(v.violations.size(), 2u);
  EXPECT_EQ(v.violations[0].dtype, DtypeBuffer::kReplay);
  EXPECT_EQ(v.violations[1].dtype, DtypeBuffer::kSnapshot);
}

TEST_F(InvariantsTest, NonDtypeViolationsCarryNoDtype) {
  obs_.capturer_rows = 1;
  Rank(0, 1).captured.clear();
  for (const Violation& v : Judge().violations) EXPECT_EQ(v.dtype, DtypeBuffer::kNone);
}

TEST_F(InvariantsTest, TpRanksDisagreeOnlyOnTpAgree) {
  // Both TP ranks of DP rank 1 capture the same wrong rows: rows-exact on
  // both, tp-agree holds. Then only TP rank 1 raises: tp-agree names it.
  Rank(1, 0).captured = Rank(1, 1).captured = {{1, 0, 2}};
  EXPECT_EQ(Where(), (Places{{Invariant::kRowsExact, {1, 0}},
                            {Invariant::kRowsExact, {1, 1}},
                            {Invariant::kConcatGlobal, {-1, 0}},
                            {Invariant::kConcatGlobal, {-1, 1}}}));
  Rank(1, 0).captured = {{1, 0, 3}};
  Rank(1, 1).captured = {{1, 0, 3}};
  Rank(1, 1).error = "RuntimeError: NCCL timeout";
  EXPECT_EQ(Where(), (Places{{Invariant::kRowsExact, {1, 1}}, {Invariant::kTpAgree, {1, 1}}}));
}

TEST_F(InvariantsTest, TpAgreeNamesTheRankAndTpRankZeroItDisagreesWith) {
  Rank(1, 1).error = "RuntimeError: NCCL timeout";
  const Verdict v = Judge();
  ASSERT_EQ(v.violations.back().invariant, Invariant::kTpAgree);
  EXPECT_EQ(v.violations.back().message,
            "dp1/tp1 captured nothing (RuntimeError: NCCL timeout) but dp1/tp0 captured "
            "dp1[0..3)");
}

TEST_F(InvariantsTest, ConcatGlobalHoldsWhenOnlyTheDpBoundaryMoved) {
  // One row moved across the DP boundary on TP rank 1: each DP rank's
  // capture is wrong, but their join is still the global batch.
  Rank(0, 1).captured = {{0, 0, 4}};
  Rank(1, 1).captured = {{0, 4, 1}, {1, 0, 3}};
  const Places got = Where();
  EXPECT_EQ(got, (Places{{Invariant::kRowsExact, {0, 1}},
                         {Invariant::kRowsExact, {1, 1}},
                         {Invariant::kTpAgree, {0, 1}},
                         {Invariant::kTpAgree, {1, 1}}}));
}

TEST_F(InvariantsTest, StrayRowsAreARowsViolation) {
  Rank(0, 0).stray_rows = 2;  // right rows, but written outside the slice too
  ASSERT_EQ(Where(), (Places{{Invariant::kRowsExact, {0, 0}}}));
  // The whole message: the rank, its branch and n, the rows, the stray
  // count, the model's rows.
  EXPECT_EQ(Judge().violations[0].message,
            "dp0/tp0 (branch ep-sp-shards, n=10) captured dp0[0..5) and wrote 2 stray or "
            "undecodable row(s), expected dp0[0..5)");
}

TEST_F(InvariantsTest, GatheredSizeAndLocalSizes) {
  obs_.local_sizes = std::vector<int64_t>{2, 2, 1, 1};
  EXPECT_EQ(Where(), (Places{{Invariant::kGatherSize, {-1, -1}}}));
  obs_.local_sizes = layout_.local_sizes;
  Rank(1, 1).n = 8;
  EXPECT_EQ(Where(), (Places{{Invariant::kGatherSize, {1, 1}}}));
}

TEST_F(InvariantsTest, GatherSizeMessageListsBothSizesAndElidesLongLists) {
  auto message = [this] { return Judge().violations.at(0).message; };
  obs_.local_sizes = std::vector<int64_t>{2, 2, 1, 1};
  EXPECT_NE(message().find("local_sizes is [2, 2, 1, 1], expected [3, 3, 2, 2]"), std::string::npos)
      << message();
  obs_.local_sizes.reset();
  EXPECT_NE(message().find("local_sizes is unset, expected [3, 3, 2, 2]"), std::string::npos)
      << message();
  // Up to 20 values in full; longer lists show 16 and the count.
  std::vector<int64_t> sizes;
  std::string text = "[";
  for (int64_t i = 0; i < 20; ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(100 + i);
    sizes.push_back(100 + i);
  }
  obs_.local_sizes = sizes;
  EXPECT_NE(message().find("local_sizes is " + text + "], expected"), std::string::npos)
      << message();
  sizes.push_back(120);
  obs_.local_sizes = sizes;
  std::string head = "[";
  for (int64_t i = 0; i < 16; ++i) head += (i == 0 ? "" : ", ") + std::to_string(100 + i);
  EXPECT_NE(message().find("local_sizes is " + head + ", ... (21 values)], expected"),
            std::string::npos)
      << message();
}

// A DP rank that owns no rows (N[d] == 0) must still not raise: an
// exception there kills the step in vLLM although nothing is captured.
TEST(IdleRankTest, ExceptionOnARankThatOwnsNoRowsIsAViolation) {
  const Case c = ::r3::testing::MakeCase({.tokens = {5, 0}});
  const model::Layout layout = model::BuildLayout(c);
  sut::Observation obs = sut::RunSut(c, {});
  ASSERT_TRUE(CheckInvariants(c, layout, obs).ok());
  auto where = [&] {
    Places out;
    for (const Violation& v : CheckInvariants(c, layout, obs).violations) {
      out.push_back({v.invariant, {v.dp, v.tp}});
    }
    return out;
  };
  sut::RankObservation& idle = obs.ranks[1 * 2 + 1];
  ASSERT_TRUE(idle.captured.empty());
  idle.branch = sut::Branch::kError;
  idle.error = "AssertionError: RoutedExpertsCapturer: unexpected topk_ids batch dim 6";
  // The captured rows are right (none): the error alone fails rows-exact,
  // and TP rank 0 of the same DP rank did not raise.
  EXPECT_EQ(where(), (Places{{Invariant::kRowsExact, {1, 1}}, {Invariant::kTpAgree, {1, 1}}}));
  obs.ranks[1 * 2 + 0].branch = sut::Branch::kError;
  obs.ranks[1 * 2 + 0].error = idle.error;
  ASSERT_EQ(where(), (Places{{Invariant::kRowsExact, {1, 0}}, {Invariant::kRowsExact, {1, 1}}}));
  const Verdict v = CheckInvariants(c, layout, obs);
  EXPECT_NE(v.violations[0].message.find("raised AssertionError"), std::string::npos)
      << v.violations[0].message;
  EXPECT_TRUE(v.violations[0].expected.empty());
}

TEST_F(InvariantsTest, RankCountMismatchIsReportedNotCrashed) {
  obs_.ranks.pop_back();
  EXPECT_EQ(Where(), (Places{{Invariant::kGatherSize, {-1, -1}}}));
}

// Violates(inv) answers for that invariant alone: another invariant's
// violation is not one of it.
TEST(VerdictTest, ViolatesNamesOnlyTheInvariantsThatFired) {
  Verdict verdict;
  EXPECT_FALSE(verdict.Violates(Invariant::kRowsExact));
  verdict.violations.push_back({.invariant = Invariant::kGatherSize, .message = "x"});
  verdict.violations.push_back({.invariant = Invariant::kRowsExact, .message = "y"});
  EXPECT_TRUE(verdict.Violates(Invariant::kGatherSize));
  EXPECT_TRUE(verdict.Violates(Invariant::kRowsExact));
  EXPECT_FALSE(verdict.Violates(Invariant::kReplayFits));
  EXPECT_FALSE(verdict.Violates(Invariant::kDtype));
}

}  // namespace
}  // namespace r3::check
