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
  const Verdict v = Judge();
  ASSERT_EQ(v.violations.size(), 4u);  // every rank's kernel gets 10 rows
  EXPECT_EQ(v.violations[0].invariant, Invariant::kReplayFits);
  EXPECT_NE(v.violations[0].message.find("did not notice"), std::string::npos);
}

TEST_F(InvariantsTest, CapturerBufferTooSmall) {
  obs_.capturer_rows = 4;
  EXPECT_EQ(Where(), (Places{{Invariant::kCapturerHolds, {0, -1}}}));
}

TEST_F(InvariantsTest, PaddingRowCapturedOnOneTpRank) {
  Rank(0, 1).captured = {{RowRun::kPad, 0, 1}, {0, 1, 4}};
  EXPECT_EQ(Where(), (Places{{Invariant::kRowsExact, {0, 1}},
                            {Invariant::kConcatGlobal, {-1, 1}},
                            {Invariant::kTpAgree, {0, 1}}}));
  const Violation first = Judge().violations[0];
  EXPECT_TRUE(first.has_rows);
  EXPECT_EQ(DescribeRuns(first.expected), "dp0[0..5)");
  EXPECT_NE(first.message.find("captured pad1 dp0[1..5)"), std::string::npos) << first.message;
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
  EXPECT_EQ(Where(), (Places{{Invariant::kDtype, {-1, -1}}}));
  case_.config.num_experts = 40000;
  obs_.snapshot_max_id = 65535;
  EXPECT_EQ(Where(), (Places{{Invariant::kDtype, {-1, -1}}}));
  EXPECT_NE(Judge().violations[0].message.find("replay dtype int16"), std::string::npos);
}

TEST_F(InvariantsTest, GatheredSizeAndLocalSizes) {
  obs_.local_sizes = std::vector<int64_t>{2, 2, 1, 1};
  EXPECT_EQ(Where(), (Places{{Invariant::kGatherSize, {-1, -1}}}));
  obs_.local_sizes = layout_.local_sizes;
  Rank(1, 1).n = 8;
  EXPECT_EQ(Where(), (Places{{Invariant::kGatherSize, {1, 1}}}));
}

TEST_F(InvariantsTest, RankCountMismatchIsReportedNotCrashed) {
  obs_.ranks.pop_back();
  EXPECT_EQ(Where(), (Places{{Invariant::kGatherSize, {-1, -1}}}));
}

}  // namespace
}  // namespace r3::check
