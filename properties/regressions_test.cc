// Runs before any generated case (Meson priority 100, not parallel): every
// case file under corpus/regressions/ and corpus/seeds/ is its own test and
// must pass against the default SUT (known findings allowed), and every file
// under corpus/findings/ must still fail with exactly its finding — a
// finding that stops failing, or fails differently, is a change to notice.
#include <algorithm>
#include <optional>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "r3/case/case_format.h"
#include "r3/check/known_findings.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"

namespace r3::props {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CaseFiles(const std::string& dir) {
  std::vector<std::string> files;
  const fs::path root = fs::path(R3CHECK_SOURCE_CORPUS) / dir;
  if (!fs::is_directory(root)) return files;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.path().extension() == ".r3case") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char ch : fs::path(info.param).stem().string()) {
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return name;
}

class Regression : public testing::TestWithParam<std::string> {};

TEST_P(Regression, PassesOnTheDefaultSut) {
  const Case c = LoadCaseFile(GetParam());
  const sut::SutOptions options;
  const check::CaseResult result = check::RunCase(c, options);
  EXPECT_TRUE(result.PassesOrKnown()) << check::VerdictText(GetParam(), result, options);
}

// `r3check minimize --save` records what the case was shrunk against:
// "# under sut S, policy P[, mutant M]." When that names something other
// than the default SUT, the case must still fail there, or it has lost the
// power it was saved for.
std::optional<sut::SutOptions> SavedAgainst(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  const std::string prefix = "# under sut ";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string rest = line.substr(prefix.size());
    if (!rest.empty() && rest.back() == '.') rest.pop_back();
    std::istringstream fields(rest);
    std::string field;
    sut::SutOptions options;
    bool first = true;
    while (std::getline(fields, field, ',')) {
      field.erase(0, field.find_first_not_of(' '));
      const std::string value = field.substr(field.find(' ') + 1);
      if (first) {
        if (auto v = sut::FindSut(field)) options.version = *v;
      } else if (field.rfind("policy ", 0) == 0) {
        if (auto p = sut::FindPolicy(value)) options.policy = *p;
      } else if (field.rfind("mutant ", 0) == 0) {
        if (auto m = sut::FindMutant(value)) options.mutants.set(*m);
      }
      first = false;
    }
    return options;
  }
  return std::nullopt;
}

TEST_P(Regression, StillFailsWhereItWasSaved) {
  const std::optional<sut::SutOptions> options = SavedAgainst(GetParam());
  const sut::SutOptions defaults;
  if (!options || (options->version == defaults.version && options->policy == defaults.policy &&
                   options->mutants.empty())) {
    GTEST_SKIP() << "not saved against a mutant or another SUT";
  }
  const check::CaseResult result = check::RunCase(LoadCaseFile(GetParam()), *options);
  EXPECT_FALSE(result.PassesOrKnown())
      << GetParam() << " no longer fails under " << check::DescribeOptions(*options)
      << ": the regression has lost its power\n" << check::VerdictText(GetParam(), result, *options);
}

INSTANTIATE_TEST_SUITE_P(Regressions, Regression, testing::ValuesIn(CaseFiles("regressions")),
                         TestName);
INSTANTIATE_TEST_SUITE_P(Seeds, Regression, testing::ValuesIn(CaseFiles("seeds")), TestName);

// "# Finding ID (...)" on the file's first lines names the finding it pins.
std::string FindingId(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  const std::string prefix = "# Finding ";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    const std::string rest = line.substr(prefix.size());
    return rest.substr(0, rest.find(' '));
  }
  return "";
}

class Finding : public testing::TestWithParam<std::string> {};

TEST_P(Finding, StillFailsWithExactlyItsFinding) {
  const std::string id = FindingId(GetParam());
  ASSERT_FALSE(id.empty()) << GetParam() << ": no '# Finding ID' header line";
  const Case c = LoadCaseFile(GetParam());
  const sut::SutOptions options;
  const check::CaseResult result = check::RunCase(c, options);
  const std::string verdict = check::VerdictText(GetParam(), result, options);
  ASSERT_FALSE(result.verdict.ok())
      << "finding " << id << " no longer fails: vLLM's behaviour changed (fixed?). Retire the "
      << "finding (known_findings.cc, this file) deliberately.\n" << verdict;
  std::set<std::string> explained_by;
  for (const check::KnownFinding* f : result.explained) {
    explained_by.insert(f == nullptr ? "<unexplained>" : std::string(f->id));
  }
  EXPECT_EQ(explained_by, std::set<std::string>{id}) << verdict;
}

INSTANTIATE_TEST_SUITE_P(Findings, Finding, testing::ValuesIn(CaseFiles("findings")), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Regression);

// Every known finding is pinned by a corpus file, and vice versa.
TEST(Findings, EveryKnownFindingHasACorpusFile) {
  std::set<std::string> files;
  for (const std::string& path : CaseFiles("findings")) files.insert(FindingId(path));
  std::set<std::string> known;
  for (const check::KnownFinding& f : check::KnownFindings()) known.insert(std::string(f.id));
  EXPECT_EQ(files, known);
}

}  // namespace
}  // namespace r3::props
