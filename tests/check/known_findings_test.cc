// Each known finding explains its own violations and none of their
// neighbours: the same invariant failing on another rank, another shape,
// another branch, another dispatch or another dtype is a real failure. A
// matcher that is a little too broad would silently turn a bug into
// "known".
#include "r3/check/known_findings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "r3/check/run_case.h"
#include "tests/testing/test_case.h"

namespace r3::check {
namespace {

using ::r3::testing::MakeCase;

// (invariant, dp, tp, finding id or "") of each violation, in report order.
using Explained = std::vector<std::tuple<Invariant, int64_t, int64_t, std::string>>;

Explained Explain(const Case& c, const sut::Observation& obs) {
  const CaseResult r = JudgeObservation(c, obs);
  Explained out;
  for (size_t i = 0; i < r.verdict.violations.size(); ++i) {
    const Violation& v = r.verdict.violations[i];
    out.emplace_back(v.invariant, v.dp, v.tp,
                     r.explained[i] == nullptr ? "" : std::string(r.explained[i]->id));
  }
  return out;
}

sut::RankObservation& Rank(const Case& c, sut::Observation& obs, int64_t d, int64_t t) {
  return obs.ranks[static_cast<size_t>(d * c.config.tp + t)];
}

const RowRuns kOnePadRow = {{RowRun::kPad, 0, 1}};
constexpr const char* kDecodePad = "internal-sp-decode-pad";
constexpr const char* kInt16 = "replay-int16-experts";

// The finding's own case (corpus/findings/internal-sp-decode-pad.r3case):
// DP2/TP2, EP, internal dispatch, SP, one token per DP rank.
Case DecodeCase(Dispatch dispatch = Dispatch::kInternal) {
  return MakeCase({.dispatch = dispatch, .tokens = {1, 1}});
}

TEST(DecodePadFinding, ExplainsExactlyTheTpRanksThatCaptureTheirPaddingRow) {
  const Case c = DecodeCase();
  EXPECT_EQ(Explain(c, sut::RunSut(c, {})),
            (Explained{{Invariant::kRowsExact, 0, 1, kDecodePad},
                       {Invariant::kRowsExact, 1, 1, kDecodePad},
                       {Invariant::kConcatGlobal, -1, 1, kDecodePad},
                       {Invariant::kTpAgree, 0, 1, kDecodePad},
                       {Invariant::kTpAgree, 1, 1, kDecodePad}}));
}

TEST(DecodePadFinding, DoesNotExplainTpRankZero) {
  const Case c = DecodeCase();
  sut::Observation obs = sut::RunSut(c, {});
  Rank(c, obs, 0, 0).captured = kOnePadRow;  // TP rank 0 holds the token: a real bug
  const Explained got = Explain(c, obs);
  EXPECT_EQ(got[0], (Explained::value_type{Invariant::kRowsExact, 0, 0, ""}));
  // Its concatenation on TP rank 0 has no padding row of the finding in it.
  EXPECT_NE(std::find(got.begin(), got.end(),
                      Explained::value_type{Invariant::kConcatGlobal, -1, 0, ""}),
            got.end());
}

TEST(DecodePadFinding, DoesNotExplainARankWithTwoRows) {
  // N[d] == 2: two full shards, no padding; the same wrong capture is a bug.
  const Case c = MakeCase({.dispatch = Dispatch::kInternal, .tokens = {2, 1}});
  sut::Observation obs = sut::RunSut(c, {});
  ASSERT_EQ(Rank(c, obs, 0, 1).branch, sut::Branch::kSpTpGather);
  Rank(c, obs, 0, 1).branch = sut::Branch::kLocal;
  Rank(c, obs, 0, 1).captured = kOnePadRow;
  for (const auto& [inv, d, t, id] : Explain(c, obs)) {
    if (d == 0 || inv == Invariant::kConcatGlobal) {
      EXPECT_EQ(id, "") << InvariantName(inv) << " dp" << d << "/tp" << t;
    }
  }
}

TEST(DecodePadFinding, DoesNotExplainNaiveDispatch) {
  const Case c = DecodeCase(Dispatch::kNaive);
  sut::Observation obs = sut::RunSut(c, {});
  ASSERT_TRUE(JudgeObservation(c, obs).verdict.ok());
  Rank(c, obs, 0, 1).branch = sut::Branch::kLocal;
  Rank(c, obs, 0, 1).captured = kOnePadRow;
  EXPECT_EQ(Explain(c, obs), (Explained{{Invariant::kRowsExact, 0, 1, ""},
                                        {Invariant::kConcatGlobal, -1, 1, ""},
                                        {Invariant::kTpAgree, 0, 1, ""}}));
}

TEST(DecodePadFinding, DoesNotExplainInternalDispatchWithoutSp) {
  const Case c = MakeCase({.dispatch = Dispatch::kInternal, .sp = SpMode::kOff, .tokens = {1, 1}});
  sut::Observation obs = sut::RunSut(c, {});
  ASSERT_TRUE(JudgeObservation(c, obs).verdict.ok());
  Rank(c, obs, 1, 1).captured = kOnePadRow;
  EXPECT_EQ(Explain(c, obs), (Explained{{Invariant::kRowsExact, 1, 1, ""},
                                        {Invariant::kConcatGlobal, -1, 1, ""},
                                        {Invariant::kTpAgree, 1, 1, ""}}));
}

TEST(DecodePadFinding, DoesNotExplainBranchEpSpShards) {
  const Case c = DecodeCase();
  sut::Observation obs = sut::RunSut(c, {});
  Rank(c, obs, 0, 1).branch = sut::Branch::kEpSpShards;
  const Explained got = Explain(c, obs);
  EXPECT_EQ(got[0], (Explained::value_type{Invariant::kRowsExact, 0, 1, ""}));
  EXPECT_EQ(got[1], (Explained::value_type{Invariant::kRowsExact, 1, 1, kDecodePad}));
}

TEST(DecodePadFinding, DoesNotExplainOtherRowsOrAnError) {
  const Case c = DecodeCase();
  sut::Observation obs = sut::RunSut(c, {});
  Rank(c, obs, 0, 1).captured = {{1, 0, 1}};  // another DP rank's token, not a padding row
  Rank(c, obs, 1, 1).error = "AssertionError: boom";  // raised after writing its padding row
  for (const auto& [inv, d, t, id] : Explain(c, obs)) {
    EXPECT_EQ(id, "") << InvariantName(inv) << " dp" << d << "/tp" << t;
  }
}

Violation RowsExactAt(int64_t dp, int64_t tp) {
  Violation v;
  v.invariant = Invariant::kRowsExact;
  v.dp = dp;
  v.tp = tp;
  return v;
}

TEST(DecodePadFinding, ExplainsTheLastRankButNoRankOutsideTheCase) {
  // DP2/TP2: dp1/tp1 is the last rank and the finding's. A violation naming
  // tp2 or dp2 names no rank: not the finding, although the rank that
  // d*T + t would index for dp0/tp2 (dp1/tp0) is made to look like one.
  const Case c = DecodeCase();
  sut::Observation obs = sut::RunSut(c, {});
  sut::RankObservation& next = Rank(c, obs, /*d=*/1, /*t=*/0);
  next.branch = sut::Branch::kLocal;
  next.n = 1;
  next.captured = kOnePadRow;
  const KnownFinding* last = ExplainViolation(c, obs, RowsExactAt(/*dp=*/1, /*tp=*/1));
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->id, kDecodePad);
  EXPECT_EQ(ExplainViolation(c, obs, RowsExactAt(/*dp=*/0, /*tp=*/2)), nullptr);
  EXPECT_EQ(ExplainViolation(c, obs, RowsExactAt(/*dp=*/2, /*tp=*/1)), nullptr);
  EXPECT_EQ(ExplainViolation(c, obs, RowsExactAt(/*dp=*/-1, /*tp=*/1)), nullptr);
}

TEST(DecodePadFinding, ConcatIsExplainedOnlyWhenEveryOtherDpRankIsRight) {
  // DP rank 1 owns 3 rows; its TP rank 1 captures one row too few. The
  // finding still explains DP rank 0's padding row, but not the joined
  // capture of TP rank 1, which DP rank 1's bug also breaks.
  const Case c = MakeCase({.dispatch = Dispatch::kInternal, .tokens = {1, 3}});
  sut::Observation obs = sut::RunSut(c, {});
  Rank(c, obs, 1, 1).captured = {{1, 0, 2}};
  EXPECT_EQ(Explain(c, obs), (Explained{{Invariant::kRowsExact, 0, 1, kDecodePad},
                                        {Invariant::kRowsExact, 1, 1, ""},
                                        {Invariant::kConcatGlobal, -1, 1, ""},
                                        {Invariant::kTpAgree, 0, 1, kDecodePad},
                                        {Invariant::kTpAgree, 1, 1, ""}}));
}

TEST(DecodePadFinding, ExplainsNoOtherInvariant) {
  const Case c = DecodeCase();
  sut::Observation obs = sut::RunSut(c, {});
  obs.capturer_rows = 0;
  Rank(c, obs, 0, 1).n = 2;
  obs.snapshot_max_id = 7;
  for (const auto& [inv, d, t, id] : Explain(c, obs)) {
    if (inv != Invariant::kRowsExact && inv != Invariant::kConcatGlobal &&
        inv != Invariant::kTpAgree) {
      EXPECT_EQ(id, "") << InvariantName(inv);
    }
  }
  // n = 2 on dp0/tp1 is not the one-row shard of the finding.
  const Explained got = Explain(c, obs);
  EXPECT_NE(std::find(got.begin(), got.end(),
                      Explained::value_type{Invariant::kRowsExact, 0, 1, ""}),
            got.end());
}

Case ExpertsCase(int64_t num_experts) {
  return MakeCase({.dp = 1, .tp = 1, .ep = false, .tokens = {1}, .num_experts = num_experts});
}

TEST(ReplayInt16Finding, ExplainsTheReplayDtypePastInt16) {
  const Case c = ExpertsCase(32769);
  EXPECT_EQ(Explain(c, sut::RunSut(c, {})), (Explained{{Invariant::kDtype, -1, -1, kInt16}}));
}

TEST(ReplayInt16Finding, DoesNotExplainTheSnapshotDtype) {
  const Case c = ExpertsCase(40000);
  sut::Observation obs = sut::RunSut(c, {});
  obs.snapshot_dtype = "int8";
  obs.snapshot_max_id = 127;
  const CaseResult r = JudgeObservation(c, obs);
  ASSERT_EQ(r.verdict.violations.size(), 2u);
  EXPECT_EQ(r.verdict.violations[0].dtype, DtypeBuffer::kReplay);
  EXPECT_EQ(r.verdict.violations[1].dtype, DtypeBuffer::kSnapshot);
  EXPECT_EQ(Explain(c, obs), (Explained{{Invariant::kDtype, -1, -1, kInt16},
                                        {Invariant::kDtype, -1, -1, ""}}));
}

TEST(ReplayInt16Finding, DoesNotExplainAtMost32768Experts) {
  for (int64_t experts : {32768, 2000, 8}) {
    const Case c = ExpertsCase(experts);
    sut::Observation obs = sut::RunSut(c, {});
    ASSERT_TRUE(JudgeObservation(c, obs).verdict.ok()) << experts;
    obs.replay_max_id = 6;  // a narrower replay buffer than int16: not the finding
    EXPECT_EQ(Explain(c, obs), (Explained{{Invariant::kDtype, -1, -1, ""}})) << experts;
  }
}

TEST(ReplayInt16Finding, DoesNotExplainAnotherReplayDtype) {
  const Case c = ExpertsCase(40000);
  sut::Observation obs = sut::RunSut(c, {});
  obs.replay_dtype = "int8";
  obs.replay_max_id = 127;
  EXPECT_EQ(Explain(c, obs), (Explained{{Invariant::kDtype, -1, -1, ""}}));
}

TEST(ReplayInt16Finding, MatchesOnTheDtypeFieldNotTheMessage) {
  const Case c = ExpertsCase(40000);
  const sut::Observation obs = sut::RunSut(c, {});
  const KnownFinding* int16 = nullptr;
  for (const KnownFinding& f : KnownFindings()) {
    if (f.id == kInt16) int16 = &f;
  }
  ASSERT_NE(int16, nullptr);
  Violation v;
  v.invariant = Invariant::kDtype;
  v.dtype = DtypeBuffer::kSnapshot;
  v.message = "expert id 39999 does not fit the replay dtype int16 (max 32767)";
  EXPECT_FALSE(int16->matches(c, obs, v));
  v.dtype = DtypeBuffer::kReplay;
  v.message = "";
  EXPECT_TRUE(int16->matches(c, obs, v));
  v.invariant = Invariant::kRowsExact;
  EXPECT_FALSE(int16->matches(c, obs, v));
}

}  // namespace
}  // namespace r3::check
