// Approval tests: they lock the text and JSON report formats. After an
// intended format change, regenerate with R3_UPDATE_APPROVALS=1 and review
// the diff of tests/testdata/approved/.
#include "r3/check/report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "r3/case/case_format.h"
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
