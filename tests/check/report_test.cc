// Approval tests: they lock the text and JSON report formats. After an
// intended format change, regenerate with R3_UPDATE_APPROVALS=1 and review
// the diff of tests/testdata/approved/.
#include "r3/check/report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/check/known_findings.h"
#include "r3/check/layout_svg.h"
#include "r3/check/xml_text.h"
#include "r3/check/sizing_report.h"
#include "r3/check/strip.h"
#include "r3check_config.h"
#include "tests/testing/approval.h"
#include "tests/testing/test_case.h"

namespace r3::check {
namespace {

void ExpectApproved(const std::string& name, const std::string& actual) {
  testing::ExpectApproved(name, actual, "report format");
}

Case Seed(const std::string& name) {
  return LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/" + name + ".r3case");
}

// What a device checked, on one line: the GPU path's account after a verdict.
TEST(ReportTest, DeviceLineSaysWhatTheDeviceChecked) {
  sut::Observation obs;
  EXPECT_EQ(DeviceLine(obs), "");
  EXPECT_TRUE(DeviceJson(obs).is_null());
  obs.device.emplace();
  obs.device->mode = "nccl on 2 GPUs";
  obs.device->steps = 3;
  obs.device->values_checked = 120;
  EXPECT_EQ(DeviceLine(obs), "gpu: nccl on 2 GPUs, 3 step(s), 120 values checked, 0 wrong\n");
  obs.device->wrong_values = 1;
  obs.device->first_mismatch = sut::Mismatch{.dp = 1, .tp = 1, .row = 3, .layer = 0, .k = 2,
                                             .got = 7, .expected = -1};
  EXPECT_EQ(DeviceLine(obs), "gpu: nccl on 2 GPUs, 3 step(s), 120 values checked, 1 wrong; first "
                             "mismatch: rank dp=1 tp=1 row 3 layer 0 k 2: got 7, expected -1\n");
  const nlohmann::ordered_json j = DeviceJson(obs);
  EXPECT_EQ(j["mode"], "nccl on 2 GPUs");
  EXPECT_EQ(j["wrong_values"], 1);
  EXPECT_EQ(j["first_mismatch"]["row"], 3);
  EXPECT_EQ(j["first_mismatch"]["got"], 7);
}

TEST(ReportTest, ExplainEagerStepText) {
  const Case c = Seed("tp2-dp2-eager");
  ExpectApproved("explain_eager.txt", ExplainText(c, RunCase(c, {}), *sut::MakeHostProducer()));
}

TEST(ReportTest, ExplainEagerStepJson) {
  const Case c = Seed("tp2-dp2-eager");
  ExpectApproved("explain_eager.json", ExplainJson(c, RunCase(c, {}), *sut::MakeHostProducer()).dump(2) + "\n");
}

TEST(ReportTest, VerdictOfThePre50874EagerStep) {
  const Case c = Seed("tp2-dp2-eager");
  const sut::SutOptions pre{.version = sut::Version::kPre50874};
  ExpectApproved("verdict_eager_pre50874.txt",
                 VerdictText("tp2-dp2-eager.r3case", RunCase(c, pre), *sut::MakeHostProducer(pre)));
}

TEST(ReportTest, ExplainInternalSpWithAMutant) {
  const Case c = Seed("tp2-dp2-internal-sp");
  const sut::SutOptions options{.mutants = sut::MutantSet(sut::MutantNamed("floor-shard-size"))};
  ExpectApproved("explain_internal_sp_floor.txt", ExplainText(c, RunCase(c, options), *sut::MakeHostProducer(options)));
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
  ExpectApproved("explain_eager.svg", LayoutSvg(c, RunCase(c, {}), *sut::MakeHostProducer()));
  ExpectApproved("sizing_eager.svg", SizingSvg(c, {}));
}

TEST(ReportTest, PictureOfAWrongCaptureUnderAMutant) {
  const Case c = Seed("tp2-dp2-internal-sp");
  const sut::SutOptions options{.mutants = sut::MutantSet(sut::MutantNamed("floor-shard-size"))};
  ExpectApproved("explain_internal_sp_floor.svg", LayoutSvg(c, RunCase(c, options), *sut::MakeHostProducer(options)));
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
  const std::string text = ExplainText(c, result, *sut::MakeHostProducer());
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
  EXPECT_NE(ExplainText(c, result, *sut::MakeHostProducer()).find("expected dp0[0..5)  WRONG\n"), std::string::npos);
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
  const std::string text = ExplainText(c, RunCase(c, {}), *sut::MakeHostProducer());
  std::string forty = "[1";
  for (int i = 1; i < 40; ++i) forty += ", 1";
  EXPECT_NE(text.find("step: tokens " + forty + "], N"), std::string::npos) << text;
}

TEST(ReportEdgesTest, LongerListsShowThirtyTwoValuesAndACount) {
  const Case c = ManyDpRanks(41);
  const std::string text = ExplainText(c, RunCase(c, {}), *sut::MakeHostProducer());
  std::string head = "[1";
  for (int i = 1; i < 32; ++i) head += ", 1";
  EXPECT_NE(text.find("step: tokens " + head + ", ... 9 more], N"), std::string::npos) << text;
}

TEST(ReportEdgesTest, ALayoutWithoutAGatherSaysSoAndNothingElse) {
  const Case c = ManyDpRanks(2);
  const std::string text = ExplainText(c, RunCase(c, {}), *sut::MakeHostProducer());
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

// explain's strips are 64 characters wide unless asked otherwise.
TEST(ReportEdgesTest, StripIsSixtyFourWideByDefault) {
  RowRuns runs;
  AppendRun(runs, {0, 0, 1000});
  EXPECT_EQ(RenderStrip(runs), RenderStrip(runs, /*width=*/64));
  EXPECT_NE(RenderStrip(runs, /*width=*/64), RenderStrip(runs, /*width=*/63));
  EXPECT_NE(RenderStrip(runs, /*width=*/64), RenderStrip(runs, /*width=*/65));
}

TEST(ReportEdgesTest, StripNamesDpRanksUpTo35AndStarsTheRest) {
  RowRuns runs;
  for (int64_t d : {9, 10, 35, 36, 37}) AppendRun(runs, {d, 0, 1});
  EXPECT_EQ(RenderStrip(runs), "|9|a|z|*|*|");
}

}  // namespace
}  // namespace r3::check

// The branches the approved reports never reach: elided violations, tensors
// and ranks, the DP gather, a buffer filled to the last row, the pictures
// past 64 ranks or 8 tensors, and the byte units of `sizing`.
namespace r3::check {
namespace {

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

Violation RowsViolation(const std::string& message) {
  return Violation{.invariant = Invariant::kRowsExact, .dp = 0, .tp = 0, .message = message};
}

TEST(ReportElisionTest, VerdictListsAtMostMaxViolationsThenCountsTheRest) {
  const Case c = Seed("tp2-dp2-eager");
  CaseResult result = RunCase(c, {});
  const KnownFinding* known = &KnownFindings()[0];
  result.verdict.violations = {RowsViolation("a"), RowsViolation("b"), RowsViolation("c")};
  result.explained = {known, nullptr, nullptr};
  const std::string head = "src: FAIL, 3 violation(s) (" + DescribeOptions(*sut::MakeHostProducer()) + ")\n";
  const std::string a = "  [3 rows-exact] a  (known finding " + std::string(known->id) + ")\n";
  const std::string b = "  [3 rows-exact] b\n";
  const std::string c3 = "  [3 rows-exact] c\n";
  EXPECT_EQ(VerdictText("src", result, *sut::MakeHostProducer(), 2), head + a + b + "  ... and 1 more\n");
  EXPECT_EQ(VerdictText("src", result, *sut::MakeHostProducer(), 3), head + a + b + c3);
  EXPECT_EQ(VerdictText("src", result, *sut::MakeHostProducer(), 0), head + "  ... and 3 more\n");
}

// check and verify print a verdict with the default cap: 12 lines.
TEST(ReportElisionTest, VerdictShowsTwelveViolationsByDefault) {
  const Case c = Seed("tp2-dp2-eager");
  CaseResult result = RunCase(c, {});
  for (int i = 0; i < 13; ++i) result.verdict.violations.push_back(RowsViolation("v"));
  result.explained.assign(13, nullptr);
  EXPECT_EQ(VerdictText("src", result, *sut::MakeHostProducer()), VerdictText("src", result, *sut::MakeHostProducer(), 12));
  EXPECT_NE(VerdictText("src", result, *sut::MakeHostProducer()).find("  ... and 1 more\n"), std::string::npos);
  EXPECT_NE(VerdictText("src", result, *sut::MakeHostProducer(), 12), VerdictText("src", result, *sut::MakeHostProducer(), 11));
  EXPECT_NE(VerdictText("src", result, *sut::MakeHostProducer(), 12), VerdictText("src", result, *sut::MakeHostProducer(), 13));
}

TEST(ReportElisionTest, EightTensorsAreShownWholeAndANinthIsCounted) {
  // Internal dispatch without EP: no gather, so one tensor per DP rank.
  const Case eight = ManyDpRanks(8);
  const std::string whole = ExplainText(eight, RunCase(eight, {}), *sut::MakeHostProducer());
  EXPECT_NE(whole.find("\ntensor 7 ("), std::string::npos) << whole;
  EXPECT_EQ(whole.find("more tensors"), std::string::npos) << whole;
  const Case nine = ManyDpRanks(9);
  const std::string cut = ExplainText(nine, RunCase(nine, {}), *sut::MakeHostProducer());
  EXPECT_NE(cut.find("\ntensor 7 ("), std::string::npos) << cut;
  EXPECT_EQ(cut.find("\ntensor 8 ("), std::string::npos) << cut;
  EXPECT_NE(cut.find("\n  ... 1 more tensors\n\nranks ("), std::string::npos) << cut;
}

TEST(ReportElisionTest, SixtyFourRanksAreShownWholeAndASixtyFifthIsCounted) {
  const Case all = ManyDpRanks(64);
  const std::string whole = ExplainText(all, RunCase(all, {}), *sut::MakeHostProducer());
  EXPECT_NE(whole.find("\n  dp63/tp0: sees tensor 63"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("more ranks"), std::string::npos) << whole;
  const Case more = ManyDpRanks(65);
  const std::string cut = ExplainText(more, RunCase(more, {}), *sut::MakeHostProducer());
  EXPECT_NE(cut.find("\n  dp63/tp0: sees tensor 63"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("\n  dp64/tp0:"), std::string::npos) << cut;
  EXPECT_NE(cut.find("\n  ... 1 more ranks\n\nverdict: "), std::string::npos) << cut;
}

TEST(ReportElisionTest, NaiveDispatchWithoutSpGathersOverTheDpGroupOnly) {
  const Case c = testing::MakeCase({.dp = 2, .tp = 1, .ep = false, .sp = SpMode::kOff,
                                    .tokens = {1, 2}});
  const std::string text = ExplainText(c, RunCase(c, {}), *sut::MakeHostProducer());
  EXPECT_NE(text.find("\ndispatch: all_gatherv over each DP group (sizes = N), DP-rank order\n"
                      "replay buffer: "),
            std::string::npos)
      << text;
  EXPECT_EQ(ExplainJson(c, RunCase(c, {}), *sut::MakeHostProducer())["gather_group"], "dp");
}

TEST(ReportElisionTest, AReplayBufferFilledToTheLastRowFits) {
  const Case c = Seed("tp2-dp2-eager");
  CaseResult result = RunCase(c, {});
  ASSERT_GT(result.layout.kernel_rows, 0);
  result.observation.replay_rows = result.layout.kernel_rows;
  EXPECT_NE(ExplainText(c, result, *sut::MakeHostProducer()).find(": fits\n\n"), std::string::npos);
  EXPECT_EQ(ExplainJson(c, result, *sut::MakeHostProducer())["replay"]["fits"], true);
  result.observation.replay_rows = result.layout.kernel_rows - 1;
  EXPECT_NE(ExplainText(c, result, *sut::MakeHostProducer()).find(": DOES NOT FIT\n\n"), std::string::npos);
  EXPECT_EQ(ExplainJson(c, result, *sut::MakeHostProducer())["replay"]["fits"], false);
}

// A hand-made result for the pictures: rank i is dp i / tp 0, sees
// `tensor_of(i)`, expects `expected[i]` and captured `captured[i]`.
struct Picture {
  Case c = ManyDpRanks(1);
  CaseResult result;

  void AddTensor(const RowRuns& runs) { result.layout.tensors.emplace_back(runs); }
  void AddRank(size_t tensor, const RowRuns& expected, const RowRuns& captured,
               const std::string& error = "") {
    const int64_t dp = static_cast<int64_t>(result.layout.ranks.size());
    result.layout.ranks.push_back({.dp = dp, .tp = 0, .tensor = tensor, .expected = expected});
    result.observation.ranks.push_back(
        {.dp = dp, .tp = 0, .error = error, .captured = captured});
  }
  std::string Svg() const { return LayoutSvg(c, result, *sut::MakeHostProducer()); }
};

RowRuns Rows(int64_t dp, int64_t count) { return {{dp, 0, count}}; }

TEST(PictureTest, SixtyFourRanksAreAllDrawn) {
  Picture p;
  RowRuns tensor;
  for (int64_t d = 0; d < 64; ++d) AppendRun(tensor, {d, 0, 1});
  p.AddTensor(tensor);
  for (int64_t d = 0; d < 64; ++d) p.AddRank(0, Rows(d, 1), Rows(d, 1));
  const std::string svg = p.Svg();
  EXPECT_EQ(Count(svg, "<g class=\"rank\">"), 64u) << svg;
  EXPECT_EQ(svg.find(" ranks: "), std::string::npos) << svg;
}

// 66 ranks, dp0 right and the other 65 wrong, nine tensors: the first 64
// wrong ranks are drawn, then one line each for the tensors and the ranks
// left out, at fixed offsets below the last tensor drawn.
TEST(PictureTest, PastSixtyFourRanksTheFirstSixtyFourWrongOnesAreDrawnAndTheRestCounted) {
  Picture p;
  RowRuns tensor;
  for (int64_t d = 0; d < 66; ++d) AppendRun(tensor, {d, 0, 1});
  p.AddTensor(tensor);
  for (int64_t t = 1; t < 9; ++t) p.AddTensor(Rows(0, 1));
  p.AddRank(0, Rows(0, 1), Rows(0, 1));
  for (int64_t d = 1; d < 66; ++d) p.AddRank(0, Rows(d, 1), {});
  const std::string svg = p.Svg();
  EXPECT_EQ(Count(svg, "<g class=\"rank wrong\">"), 64u);
  EXPECT_EQ(Count(svg, "<g class=\"rank\">"), 0u);
  EXPECT_NE(svg.find(">dp64/tp0  WRONG</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">dp65/tp0"), std::string::npos);
  EXPECT_NE(svg.find(">tensor 7 ("), std::string::npos);
  EXPECT_EQ(svg.find(">tensor 8 ("), std::string::npos);
  // y: 66, +40 for tensor 0, +18 for each of its 64 ranks, +10; +50 for each
  // of tensors 1..7; then 20 per summary line and 30 for the verdict.
  EXPECT_NE(svg.find("<text x=\"10\" y=\"1630.00\" font-size=\"12\">... 1 more tensors</text>\n"
                     "<text x=\"10\" y=\"1650.00\" font-size=\"12\">66 ranks: 65 wrong (drawn, "
                     "at most 64), 1 ok (not drawn)</text>\n"
                     "<text x=\"10\" y=\"1672.00\" font-size=\"13\" fill=\"black\">verdict: PASS"),
            std::string::npos)
      << svg.substr(svg.size() - 600);
  EXPECT_NE(svg.find("height=\"1688.00\""), std::string::npos);
}

// Owners' hues step by 137 degrees (mod 360), lightness alternates with the
// DP rank's parity, and a run gets its owner's name from 28 px up (here 1 px
// per row).
TEST(PictureTest, OwnersAreColouredByRankAndNamedWhenTheirRunIsWideEnough) {
  Picture p;
  RowRuns tensor;
  for (const auto& [d, rows] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 28}, {1, 27}, {2, 400}, {3, 345}}) {
    AppendRun(tensor, {d, 0, rows});
  }
  p.AddTensor(tensor);
  p.AddRank(0, Rows(0, 28), Rows(0, 28));
  const std::string svg = p.Svg();
  EXPECT_NE(svg.find("width=\"28.00\" height=\"26.00\" fill=\"hsl(0,65%,55%)\""),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("width=\"27.00\" height=\"26.00\" fill=\"hsl(137,65%,70%)\""),
            std::string::npos);
  EXPECT_NE(svg.find("fill=\"hsl(274,65%,55%)\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"hsl(51,65%,70%)\""), std::string::npos);
  EXPECT_NE(svg.find("font-size=\"11\">dp0</text>"), std::string::npos);
  EXPECT_EQ(svg.find("font-size=\"11\">dp1</text>"), std::string::npos);
  EXPECT_NE(svg.find("font-size=\"11\">dp2</text>"), std::string::npos);
  EXPECT_NE(svg.find("font-size=\"11\">dp3</text>"), std::string::npos);
}

// One scale fits everything drawn: a capture longer than its tensor (rank 0
// only) halves the tensor's bar, and that rank is framed as wrong though it
// raised nothing.
TEST(PictureTest, ALongWrongCaptureSetsTheScaleAndIsFramed) {
  Picture p;
  p.AddTensor(Rows(0, 100));
  p.AddRank(0, Rows(0, 100), Rows(0, 200));
  p.AddRank(0, Rows(0, 100), Rows(0, 100));
  const std::string svg = p.Svg();
  EXPECT_NE(svg.find("<rect x=\"150.00\" y=\"66.00\" width=\"400.00\" height=\"26.00\""),
            std::string::npos)
      << svg;
  EXPECT_EQ(Count(svg, "<g class=\"rank wrong\">"), 1u);
  EXPECT_EQ(Count(svg, "<g class=\"rank\">"), 1u);
  EXPECT_NE(svg.find("width=\"804.00\" height=\"16\" fill=\"none\" stroke=\"red\""),
            std::string::npos);
}

TEST(PictureTest, TinyAndEmptyStepsStillScaleToTheFullWidth) {
  Picture one;
  one.AddTensor(Rows(0, 1));
  one.AddRank(0, Rows(0, 1), Rows(0, 1));
  EXPECT_NE(one.Svg().find("<rect x=\"150.00\" y=\"66.00\" width=\"800.00\""),
            std::string::npos)
      << one.Svg();
  // No rows anywhere: the failed rank's frame keeps its 4 px minimum.
  Picture empty;
  empty.AddTensor({});
  empty.AddRank(0, {}, {}, "boom");
  const std::string svg = empty.Svg();
  EXPECT_NE(svg.find("width=\"8.00\" height=\"16\" fill=\"none\" stroke=\"red\""),
            std::string::npos)
      << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
}

TEST(PictureTest, SizingGridReachesTheTopPowerOfTwo) {
  // DP 1, TP 1: every policy holds 2^20 rows at M = 2^20, so the row axis
  // ends at 2^20 and is labelled there.
  const Case c = testing::MakeCase({.dp = 1, .tp = 1, .ep = false, .tokens = {1}});
  EXPECT_NE(SizingSvg(c, {}).find("text-anchor=\"end\">2^20</text>"), std::string::npos);
}

TEST(SizingReportTest, ABoundOfOneRowGivesEachPolicyItsSlack) {
  Case c = testing::MakeCase({.dp = 1, .tp = 1, .ep = false, .max_num_batched_tokens = 1,
                              .tokens = {1}});
  const SizingReport report = BuildSizingReport(c, {});
  ASSERT_EQ(report.required_rows, 1);
  for (const PolicySizing& p : report.policies) {
    EXPECT_EQ(p.slack, static_cast<double>(p.rows)) << p.name;
    EXPECT_EQ(p.bytes_per_layer, p.rows * 8 * 2) << p.name;
  }
  // A report built field by field (the JSON and picture tests do) starts
  // from zeros: nothing reads as a size it was not given.
  const PolicySizing blank{};
  EXPECT_EQ(blank.rows, 0);
  EXPECT_EQ(blank.bytes_per_layer, 0);
  EXPECT_EQ(blank.bytes_all_layers, 0);
  EXPECT_EQ(blank.slack, 0.0);
  EXPECT_FALSE(blank.safe);
  const SizingReport empty{};
  EXPECT_EQ(empty.required_rows, 0);
  EXPECT_EQ(empty.step_kernel_rows, 0);
  EXPECT_TRUE(empty.policies.empty());
}

// Bytes in 1024-units: whole numbers bare, the rest to one decimal, up to EiB.
TEST(SizingReportTest, BytesAreShownInBinaryUnitsAtEachBoundary) {
  const Case c = ManyDpRanks(1);
  SizingReport report{.required_rows = 1, .step_kernel_rows = 1};
  const auto policy = [](const char* name, int64_t per_layer, int64_t all) {
    return PolicySizing{.name = name, .rows = 1, .safe = true, .slack = 1.0,
                        .bytes_per_layer = per_layer, .bytes_all_layers = all};
  };
  report.policies = {policy("a", 1023, 1024), policy("b", 1536, int64_t{1} << 60),
                     policy("c", int64_t{1} << 20, int64_t{1023} << 50)};
  const std::string text = SizingText(c, report);
  for (const char* part : {" 1023 B ", " 1 KiB\n", " 1.5 KiB ", " 1 EiB\n", " 1 MiB ",
                           " 1023 PiB\n"}) {
    EXPECT_NE(text.find(part), std::string::npos) << "no \"" << part << "\" in\n" << text;
  }
}

TEST(SizingReportTest, ARowLongerThanTheLineBufferIsCutNotOverrun) {
  const Case c = ManyDpRanks(1);
  SizingReport report{.required_rows = 1, .step_kernel_rows = 1};
  report.policies = {PolicySizing{.name = std::string(200, 'x'), .rows = 1}};
  const std::string text = SizingText(c, report);
  // the 160-byte buffer: 159 characters and the terminator
  ASSERT_GE(text.size(), 160u);
  EXPECT_EQ(text.substr(text.size() - 160), "\n" + std::string(159, 'x'));
}

}  // namespace
}  // namespace r3::check
