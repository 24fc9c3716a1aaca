// Approval tests: they lock the text and JSON report formats. After an
// intended format change, regenerate with R3_UPDATE_APPROVALS=1 and review
// the diff of tests/testdata/approved/.
#include "r3/check/report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "r3/case/case_format.h"
#include "r3/check/known_findings.h"
#include "r3/check/layout_svg.h"
#include "r3/check/xml_text.h"
#include "r3/check/sizing_report.h"
#include "r3/check/strip.h"

namespace r3::check {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void ExpectApproved(const std::string& name, const std::string& actual) {
  const std::string path = std::string(R3CHECK_TESTDATA) + "/approved/" + name;
  const char* update = std::getenv("R3_UPDATE_APPROVALS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << actual;
    return;
  }
  EXPECT_EQ(actual, ReadFile(path)) << "report format changed: " << path;
}

Case Seed(const std::string& name) {
  return LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/" + name + ".r3case");
}

TEST(ReportTest, ExplainEagerStepText) {
  const Case c = Seed("tp2-dp2-eager");
  ExpectApproved("explain_eager.txt", ExplainText(c, RunCase(c, {}), {}));
}

TEST(ReportTest, ExplainEagerStepJson) {
  const Case c = Seed("tp2-dp2-eager");
  ExpectApproved("explain_eager.json", ExplainJson(c, RunCase(c, {}), {}).dump(2) + "\n");
}

TEST(ReportTest, VerdictOfThePre50874EagerStep) {
  const Case c = Seed("tp2-dp2-eager");
  const sut::SutOptions pre{.version = sut::Version::kPre50874};
  ExpectApproved("verdict_eager_pre50874.txt",
                 VerdictText("tp2-dp2-eager.r3case", RunCase(c, pre), pre));
}

TEST(ReportTest, ExplainInternalSpWithAMutant) {
  const Case c = Seed("tp2-dp2-internal-sp");
  const sut::SutOptions options{.mutants = sut::MutantSet(sut::Mutant::kFloorShardSize)};
  ExpectApproved("explain_internal_sp_floor.txt", ExplainText(c, RunCase(c, options), options));
}

TEST(ReportTest, SizingOfTheWarmup) {
  const Case c = Seed("tp2-dp2-warmup");
  const SizingReport report = BuildSizingReport(c, {});
  ExpectApproved("sizing_warmup.txt", SizingText(c, report));
  ExpectApproved("sizing_warmup.json", SizingJson(report).dump(2) + "\n");
}

// The pictures are reports too: their bytes are locked like the text's (they
// were looked at when approved; tests/cli/svg_render_test.py renders them).
TEST(ReportTest, PicturesOfTheEagerStep) {
  const Case c = Seed("tp2-dp2-eager");
  ExpectApproved("explain_eager.svg", LayoutSvg(c, RunCase(c, {}), {}));
  ExpectApproved("sizing_eager.svg", SizingSvg(c, {}));
}

TEST(ReportTest, PictureOfAWrongCaptureUnderAMutant) {
  const Case c = Seed("tp2-dp2-internal-sp");
  const sut::SutOptions options{.mutants = sut::MutantSet(sut::Mutant::kFloorShardSize)};
  ExpectApproved("explain_internal_sp_floor.svg", LayoutSvg(c, RunCase(c, options), options));
}

// A wrong rank is labelled by the violations that name it (its DP rank, and
// its TP rank or every TP rank): "known finding ID" when known findings
// explain all of them, "WRONG" when one is unexplained, whatever the other
// ranks' violations are.
TEST(ReportTest, EachWrongRankIsLabelledByItsOwnViolations) {
  const Case c = Seed("tp2-dp2-eager");
  CaseResult result = RunCase(c, {});
  ASSERT_EQ(result.observation.ranks.size(), 4u);  // dp0/tp0 dp0/tp1 dp1/tp0 dp1/tp1
  for (auto& r : result.observation.ranks) r.captured = {};  // every rank wrong
  const KnownFinding* known = &KnownFindings()[0];
  const auto violation = [](int64_t dp, int64_t tp) {
    return Violation{.invariant = Invariant::kRowsExact, .dp = dp, .tp = tp, .message = "x"};
  };
  // dp0/tp0: explained; dp0/tp1: one not explained, then one explained; dp1
  // (every TP rank, tp -1): explained
  result.verdict.violations = {violation(0, 0), violation(0, 1), violation(0, 1), violation(1, -1)};
  result.explained = {known, nullptr, known, known};
  const std::string text = ExplainText(c, result, {});
  const std::string label = "  known finding " + std::string(known->id) + "\n";
  EXPECT_NE(text.find("expected dp0[0..5)" + label), std::string::npos) << text;
  EXPECT_NE(text.find("expected dp0[0..5)  WRONG\n"), std::string::npos) << text;
  size_t dp1_known = 0;
  for (size_t at = text.find("expected dp1[0..3)" + label); at != std::string::npos;
       at = text.find("expected dp1[0..3)" + label, at + 1)) {
    ++dp1_known;
  }
  EXPECT_EQ(dp1_known, 2u) << "a violation with tp -1 names every TP rank of its DP rank\n"
                           << text;
  // A wrong rank no violation names is WRONG (nothing explains it).
  result.verdict.violations = {violation(1, -1)};
  result.explained = {known};
  EXPECT_NE(ExplainText(c, result, {}).find("expected dp0[0..5)  WRONG\n"), std::string::npos);
}

TEST(ReportTest, ViolationsJsonListsEveryViolationInOrder) {
  const Case c = Seed("tp2-dp2-eager");
  const sut::SutOptions pre{.version = sut::Version::kPre50874};
  const CaseResult result = RunCase(c, pre);
  const nlohmann::ordered_json j = ViolationsJson(result);
  ASSERT_GE(result.verdict.violations.size(), 2u);
  ASSERT_EQ(j.size(), result.verdict.violations.size());
  for (size_t i = 0; i < j.size(); ++i) {
    EXPECT_EQ(j[i]["message"], result.verdict.violations[i].message) << i;
    EXPECT_EQ(j[i]["dp"], result.verdict.violations[i].dp) << i;
  }
}

TEST(ReportTest, XmlTextEscapesMarkupAndReplacesControlBytes) {
  EXPECT_EQ(XmlText("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
  EXPECT_EQ(XmlText(std::string("x\x01y\x1fz\n\t\r", 8)), "x?y?z\n\t\r");
  EXPECT_EQ(XmlText("dp0[0..5) \xc3\xa9"), "dp0[0..5) \xc3\xa9");  // UTF-8 passes through
}

TEST(ReportTest, StripScalesLargeTensorsButKeepsEveryRun) {
  RowRuns runs;
  AppendRun(runs, {0, 0, 100000});
  AppendRun(runs, {RowRun::kPad, 0, 1});
  AppendRun(runs, {1, 0, 50000});
  EXPECT_EQ(RenderStrip(runs, /*width=*/30), "|" + std::string(19, '0') + "|.|" +
                                                  std::string(9, '1') + "|");
  EXPECT_EQ(RenderStrip({}, 30), "|(empty)|");
}

}  // namespace
}  // namespace r3::check

// Edges of the report's elisions and of the dispatch line, each pinned where
// the mutation run found nothing holding them (docs/mutation.md).
namespace r3::check {
namespace {

Case ManyDpRanks(int64_t dp) {
  Case c;
  c.config = {.dp = dp, .tp = 1, .ep = false, .dispatch = Dispatch::kInternal,
              .max_num_batched_tokens = 8, .top_k = 1, .num_experts = 8, .num_layers = 1};
  c.step.tokens.assign(static_cast<size_t>(dp), 1);
  c.step.padded = c.step.tokens;
  return c;
}

TEST(ReportEdgesTest, ListsUpToFortyValuesAreShownWhole) {
  const Case c = ManyDpRanks(40);
  const std::string text = ExplainText(c, RunCase(c, {}), {});
  std::string forty = "[1";
  for (int i = 1; i < 40; ++i) forty += ", 1";
  EXPECT_NE(text.find("step: tokens " + forty + "], N"), std::string::npos) << text;
}

TEST(ReportEdgesTest, LongerListsShowThirtyTwoValuesAndACount) {
  const Case c = ManyDpRanks(41);
  const std::string text = ExplainText(c, RunCase(c, {}), {});
  std::string head = "[1";
  for (int i = 1; i < 32; ++i) head += ", 1";
  EXPECT_NE(text.find("step: tokens " + head + ", ... 9 more], N"), std::string::npos) << text;
}

TEST(ReportEdgesTest, ALayoutWithoutAGatherSaysSoAndNothingElse) {
  const Case c = ManyDpRanks(2);
  const std::string text = ExplainText(c, RunCase(c, {}), {});
  EXPECT_NE(text.find("dispatch: no gather before the kernel; each router sees its own DP "
                      "rank's rows\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("all_gatherv"), std::string::npos) << text;
}

TEST(ReportEdgesTest, LegendShowsSixteenRunsThenACount) {
  RowRuns runs;
  for (int64_t d = 0; d < 17; ++d) AppendRun(runs, {d, 0, 1});
  const std::string legend = RenderLegend(runs);
  EXPECT_NE(legend.find("[15..16) dp15[0..1)  ... 1 more runs"), std::string::npos) << legend;
  EXPECT_EQ(legend.find("dp16"), std::string::npos) << legend;
  runs.pop_back();
  EXPECT_EQ(RenderLegend(runs).find("more runs"), std::string::npos);
}

TEST(ReportEdgesTest, StripNamesDpRanksUpTo35AndStarsTheRest) {
  RowRuns runs;
  for (int64_t d : {9, 10, 35, 36, 37}) AppendRun(runs, {d, 0, 1});
  EXPECT_EQ(RenderStrip(runs), "|9|a|z|*|*|");
}

}  // namespace
}  // namespace r3::check
