#include "r3/check/run_case.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "r3/case/case_format.h"
#include "r3/case/checked_math.h"
#include "r3/case/corpus.h"
#include "r3/case/limits.h"
#include "r3/model/sizing.h"
#include "r3/case/layout_domain.h"
#include "r3/sut/dispatch_plan.h"
#include "r3check_config.h"
#include "tests/testing/ascend_observation.h"
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

// A producer that answers as the built-in SUT does, counting its calls.
class BuiltInAsExternal : public sut::Producer {
 public:
  BuiltInAsExternal() : Producer({}) {}
  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    ++calls;
    std::vector<sut::Observation> out;
    for (const Case& c : cases) out.push_back(sut::RunSut(c, {}));
    return out;
  }
  std::string Label() const override { return "built-in as external"; }
  std::string Id() const override { return "built-in"; }
  int calls = 0;
};

TEST(RunCaseTest, AnExternalBatchIsJudgedCaseByCaseInOrder) {
  // Three shapes with different rank counts, so a result judged against the
  // wrong case (or a missing one) shows.
  const std::vector<Case> cases = {
      testing::MakeCase({.dp = 1, .tp = 1, .ep = false, .tokens = {3}}),
      testing::MakeCase({.tokens = {5, 3}}),
      testing::MakeCase({.dp = 4, .tp = 1, .ep = false, .tokens = {1, 2, 3, 4}}),
  };
  const auto external = std::make_shared<BuiltInAsExternal>();
  const std::vector<CaseResult> results = RunCases(cases, *external);
  EXPECT_EQ(external->calls, 1);
  ASSERT_EQ(results.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult direct = RunCase(cases[i], {});
    EXPECT_EQ(results[i].observation.ranks.size(), direct.observation.ranks.size()) << i;
    EXPECT_EQ(results[i].layout.kernel_rows, direct.layout.kernel_rows) << i;
    EXPECT_EQ(results[i].verdict.violations.size(), direct.verdict.violations.size()) << i;
  }
}

// A batch's results are freed on the pool (big batches) or in place, and
// the vector is left empty either way.
TEST(RunCaseTest, ReleasedResultsLeaveAnEmptyBatch) {
  for (const size_t n : {size_t{3}, size_t{300}}) {
    const std::vector<Case> cases(n, testing::MakeCase({.tokens = {5, 3}}));
    BuiltInAsExternal producer;
    std::vector<CaseResult> results = RunCases(cases, producer);
    ASSERT_EQ(results.size(), n);
    ReleaseResults(results);
    EXPECT_TRUE(results.empty()) << n;
  }
}

// A producer is never asked for a layout it does not model: the batch is
// refused before Observe, naming the field.
TEST(RunCaseTest, ACaseOutsideTheProducersLayoutsIsRefusedNamingTheField) {
  Case c = testing::MakeCase({.tokens = {5, 3}});
  c.config.moe_comm = MoeComm::kMc2;
  const auto external = std::make_shared<BuiltInAsExternal>();
  try {
    RunCases(std::vector<Case>{c}, *external);
    ADD_FAILURE() << "ran a vllm-ascend case on vLLM's layouts";
  } catch (const sut::ExternalSutError& e) {
    EXPECT_EQ(std::string(e.what()),
              "case outside the layouts of built-in as external: moe_comm: mc2 is vllm-ascend's layout; "
              "built-in runs vLLM's dispatch (moe_comm none)");
  }
  EXPECT_EQ(external->calls, 0);
}

// vllm-ascend's layouts, each rank capturing its own rows: no replay buffer
// (its kernels take none), so neither its size nor its int16 dtype is
// judged, whatever the kernel rows and the expert ids.
class AscendCapturesItsRows : public sut::Producer {
 public:
  explicit AscendCapturesItsRows(const sut::SutOptions& options = {}) : Producer(options) {}
  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    std::vector<sut::Observation> out;
    for (const Case& c : cases) out.push_back(testing::AscendOwnRows(c, options()));
    return out;
  }
  std::string Label() const override { return "ascend"; }
  std::string Id() const override { return "ascend"; }
  LayoutDomain Domain() const override { return testing::kAscendDomain; }
};

TEST(RunCaseTest, AnAscendLayoutHasNoReplayBufferToJudge) {
  Case c = testing::MakeCase({.dp = 4, .tp = 2, .max_num_batched_tokens = 16,
                              .tokens = {16, 1, 16, 16}});
  c.config.num_experts = 70000;  // past int16
  c.config.top_k = 8;
  AscendCapturesItsRows producer;
  for (MoeComm comm : {MoeComm::kAllGather, MoeComm::kAllToAll, MoeComm::kMc2}) {
    c.config.moe_comm = comm;
    const std::vector<CaseResult> r = RunCases(std::vector<Case>{c}, producer);
    EXPECT_TRUE(r[0].verdict.violations.empty()) << MoeCommName(comm) << ": " << r[0].verdict.violations[0].message;
    EXPECT_EQ(r[0].observation.policy, "none: vllm-ascend's kernels have no replay buffer");
    EXPECT_EQ(r[0].observation.replay_dtype, "none");
  }
  c.config.moe_comm = MoeComm::kAllGather;  // the padded all-gather: 4 ranks of max N = 16
  EXPECT_EQ(RunCases(std::vector<Case>{c}, producer)[0].layout.kernel_rows, 64);
  // Under the legacy policy vLLM's buffer would hold M = 16 of those 64 rows.
  sut::SutOptions legacy;
  legacy.policy = sut::Policy::kLegacy;
  AscendCapturesItsRows with_legacy(legacy);
  const std::vector<CaseResult> r = RunCases(std::vector<Case>{c}, with_legacy);
  EXPECT_TRUE(r[0].verdict.violations.empty()) << r[0].verdict.violations[0].message;
}

// A producer that checks on a device: a wrong value its rows cannot show
// (another layer, a cell outside the captured rows) still fails the case,
// at the mismatch's rank, unless a violation already says the case fails.
// The violation names the step the rows came from (a graph's kept replay),
// not the sum over every replay.
TEST(RunCaseTest, ADevicesUnseenWrongValueIsARowsExactViolation) {
  const Case c = testing::MakeCase({.tokens = {5, 3}});
  sut::Observation clean = sut::RunSut(c, {});
  clean.device.emplace();
  EXPECT_TRUE(JudgeObservation(c, clean).verdict.ok());

  sut::Observation wrong = clean;
  wrong.device->wrong_values = 6;  // three replays
  wrong.device->first_mismatch = sut::Mismatch{.dp = 0, .row = 1};
  wrong.device->step_wrong_values = 2;
  wrong.device->step_first_mismatch = sut::Mismatch{.dp = 1, .tp = 0, .row = 3, .layer = 1,
                                                    .k = 2, .got = 7, .expected = 9};
  const CaseResult r = JudgeObservation(c, wrong);
  ASSERT_EQ(r.verdict.violations.size(), 1u);
  const Violation& v = r.verdict.violations[0];
  EXPECT_EQ(v.invariant, Invariant::kRowsExact);
  EXPECT_EQ(v.dp, 1);
  EXPECT_EQ(v.tp, 0);
  EXPECT_EQ(v.message, "gpu: 2 wrong values in the capturer buffer, first at row 3 layer 1 k 2: "
                       "got 7, expected 9");
  ASSERT_EQ(r.explained.size(), 1u);
  EXPECT_EQ(r.explained[0], nullptr);
  EXPECT_FALSE(r.PassesOrKnown());

  // Wrong values in other replays only: the rows shown are right.
  sut::Observation other_replays = clean;
  other_replays.device->wrong_values = 4;
  EXPECT_TRUE(JudgeObservation(c, other_replays).verdict.ok());

  // The rows already show the failure: no second violation for the values.
  sut::Observation shown = wrong;
  shown.ranks[0].captured.clear();
  const CaseResult both = JudgeObservation(c, shown);
  EXPECT_FALSE(both.verdict.ok());
  for (const Violation& x : both.verdict.violations) {
    EXPECT_EQ(x.message.find("wrong values in the capturer buffer"), std::string::npos);
  }
  // Without a device, nothing is added.
  sut::Observation host = wrong;
  host.device.reset();
  EXPECT_TRUE(JudgeObservation(c, host).verdict.ok());
}

// A known finding that explains the rows still passes with wrong values
// behind it: the values are the finding's, not a new failure.
TEST(RunCaseTest, WrongValuesBehindAKnownFindingStillPass) {
  for (const std::string& path : ListCaseFiles(std::string(R3CHECK_SOURCE_CORPUS) + "/findings")) {
    const Case c = LoadCaseFile(path);
    sut::Observation obs = sut::RunSut(c, {});
    const CaseResult host = JudgeObservation(c, obs);
    ASSERT_FALSE(host.verdict.ok()) << path;
    ASSERT_TRUE(host.PassesOrKnown()) << path;
    obs.device.emplace();
    obs.device->wrong_values = obs.device->step_wrong_values = 5;
    const CaseResult r = JudgeObservation(c, obs);
    EXPECT_EQ(r.verdict.violations.size(), host.verdict.violations.size()) << path;
    EXPECT_TRUE(r.PassesOrKnown()) << path;
  }
}

}  // namespace
}  // namespace r3::check
