// Runs before any generated case (Meson priority 100, not parallel): every
// case file under corpus/regressions/ and corpus/seeds/ is its own test and
// must pass against the default SUT (known findings allowed), and every file
// under corpus/findings/ must still fail with exactly its finding — a
// finding that stops failing, or fails differently, is a change to notice.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "r3/case/case_format.h"
#include "r3/case/corpus.h"
#include "r3/check/known_findings.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"
#include "r3check_config.h"

namespace r3::props {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CaseFiles(const std::string& dir) {
  return ListCaseFiles((fs::path(R3CHECK_SOURCE_CORPUS) / dir).string());
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
  EXPECT_TRUE(result.PassesOrKnown()) << check::VerdictText(GetParam(), result, *sut::MakeHostProducer(options));
}

// `r3check minimize --save` records what the case was shrunk against:
// "# under sut S, policy P[, mutant M]..." When that names something other
// than the default SUT, the case must still fail there, or it has lost the
// power it was saved for. A name r3check no longer knows (a mutant removed
// or renamed, a typo) fails the test: skipping would keep a regression that
// guards nothing.
struct SavedUnder {
  sut::SutOptions options;
  std::string sut;                   // as written
  std::vector<std::string> unknown;  // "mutant NAME", "policy NAME", "sut NAME", "field TEXT"
};

std::optional<SavedUnder> SavedAgainst(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  const std::string prefix = "# under sut ";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::string rest = line.substr(prefix.size());
    if (!rest.empty() && rest.back() == '.') rest.pop_back();
    SavedUnder saved;
    // The SUT label comes first and may itself hold ", " (an engine's path).
    const size_t policy_at = rest.find(", policy ");
    saved.sut = rest.substr(0, policy_at);
    if (auto v = sut::FindSut(saved.sut)) {
      saved.options.version = *v;
    } else {
      saved.unknown.push_back("sut " + saved.sut);
    }
    if (policy_at == std::string::npos) {
      saved.unknown.push_back("field policy (missing)");
      return saved;
    }
    std::istringstream fields(rest.substr(policy_at + 2));
    std::string field;
    while (std::getline(fields, field, ',')) {
      field.erase(0, field.find_first_not_of(' '));
      const std::string value = field.substr(field.find(' ') + 1);
      if (field.rfind("policy ", 0) == 0) {
        if (auto p = sut::FindPolicy(value)) {
          saved.options.policy = *p;
        } else {
          saved.unknown.push_back("policy " + value);
        }
      } else if (field.rfind("mutant ", 0) == 0) {
        if (auto m = sut::FindMutant(value)) {
          saved.options.mutants.set(*m);
        } else {
          saved.unknown.push_back("mutant " + value);
        }
      } else {
        saved.unknown.push_back("field " + field);
      }
    }
    return saved;
  }
  return std::nullopt;
}

bool IsEngineSut(const std::string& label) {
  return label.rfind("vllm:", 0) == 0 || label.rfind("exec:", 0) == 0;
}

TEST_P(Regression, StillFailsWhereItWasSaved) {
  const std::optional<SavedUnder> saved = SavedAgainst(GetParam());
  if (saved && IsEngineSut(saved->sut)) {
    GTEST_SKIP() << "saved against the engine SUT " << saved->sut
                 << ": check it with `r3check check --sut ...` where that engine runs";
  }
  if (saved) {
    for (const std::string& what : saved->unknown) {
      ADD_FAILURE() << GetParam() << " was saved against " << what
                    << ", which r3check does not know (removed, renamed or misspelled): re-save "
                    << "the case against what it guards, or delete it deliberately";
    }
    if (!saved->unknown.empty()) return;
  }
  const sut::SutOptions defaults;
  if (!saved || (saved->options.version == defaults.version &&
                 saved->options.policy == defaults.policy && saved->options.mutants.empty())) {
    GTEST_SKIP() << "not saved against a mutant or another SUT";
  }
  const sut::SutOptions& options = saved->options;
  const check::CaseResult result = check::RunCase(LoadCaseFile(GetParam()), options);
  EXPECT_FALSE(result.PassesOrKnown())
      << GetParam() << " no longer fails under " << check::DescribeOptions(*sut::MakeHostProducer(options))
      << ": the regression has lost its power\n" << check::VerdictText(GetParam(), result, *sut::MakeHostProducer(options));
}

// The header parser itself: a misspelled or removed name is reported, never
// read as the default SUT.
TEST(SavedAgainstHeader, UnknownNamesAreReportedNotIgnored) {
  const std::string path = testing::TempDir() + "r3-saved-against.r3case";
  auto parse = [&](const std::string& header) {
    std::ofstream(path) << "# r3check minimize: invariant 1 replay-fits fails\n" << header
                        << "\nr3case 1\n";
    return SavedAgainst(path);
  };
  std::optional<SavedUnder> s = parse("# under sut vllm-post-50874, policy pr50874, mutant no-sp-trim.");
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->unknown.empty());
  EXPECT_TRUE(s->options.mutants.has(sut::Mutant::kNoSpTrim));
  s = parse("# under sut vllm-post-50874, policy pr50874, mutant no-sp-trm.");
  EXPECT_EQ(s->unknown, std::vector<std::string>{"mutant no-sp-trm"});
  EXPECT_TRUE(s->options.mutants.empty());
  s = parse("# under sut vllm-post-50875, policy tigth.");
  EXPECT_EQ(s->unknown, (std::vector<std::string>{"sut vllm-post-50875", "policy tigth"}));
  s = parse("# under sut vllm-pre-50874, policy legacy, mutnt snapshot-int8.");
  EXPECT_EQ(s->unknown, std::vector<std::string>{"field mutnt snapshot-int8"});
  s = parse("# under sut vllm:/src/vllm, x (sha256 0123456789ab), policy pr50874.");
  EXPECT_EQ(s->sut, "vllm:/src/vllm, x (sha256 0123456789ab)");
  EXPECT_TRUE(IsEngineSut(s->sut));
  EXPECT_FALSE(parse("# a case without the header").has_value());
  std::remove(path.c_str());
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
  const std::string verdict = check::VerdictText(GetParam(), result, *sut::MakeHostProducer(options));
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
