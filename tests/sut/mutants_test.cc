// Every seeded bug must change the verdict of at least one corpus case, and
// the equivalent one must never change any.
#include "r3/sut/mutants.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "r3/case/case_format.h"
#include "r3/check/run_case.h"
#include "r3/sample/case_sampler.h"

namespace r3::sut {
namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const char* sub : {"seeds", "regressions"}) {
    const std::filesystem::path dir = std::filesystem::path(R3CHECK_SOURCE_CORPUS) / sub;
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".r3case") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Corpus cases on which `options` gives an unexplained violation.
std::vector<std::string> Kills(const SutOptions& options) {
  std::vector<std::string> killed;
  for (const std::string& path : CorpusFiles()) {
    const Case c = LoadCaseFile(path);
    if (!check::RunCase(c, options).PassesOrKnown()) {
      killed.push_back(std::filesystem::path(path).stem().string());
    }
  }
  return killed;
}

TEST(MutantsTest, CorpusPassesUnderTheDefaultSut) {
  ASSERT_GE(CorpusFiles().size(), 8u);
  EXPECT_TRUE(Kills({}).empty());
}

TEST(MutantsTest, EveryHostMutantFailsSomeCorpusCase) {
  for (const MutantInfo& m : MutantCatalogue()) {
    if (m.equivalent || m.gpu_only) continue;
    const std::vector<std::string> killed = Kills({.mutants = MutantSet(m.id)});
    EXPECT_FALSE(killed.empty()) << m.name << " survives the whole corpus";
    std::string list;
    for (const std::string& k : killed) list += " " + k;
    std::cout << "  " << m.name << ":" << list << "\n";
  }
}

TEST(MutantsTest, Pre50874FailsTheEagerStep) {
  const std::vector<std::string> killed = Kills({.version = Version::kPre50874});
  EXPECT_NE(std::find(killed.begin(), killed.end(), "tp2-dp2-eager"), killed.end());
}

TEST(MutantsTest, LegacySizingFailsTheWarmup) {
  const std::vector<std::string> killed = Kills({.policy = Policy::kLegacy});
  EXPECT_NE(std::find(killed.begin(), killed.end(), "tp2-dp2-warmup"), killed.end());
}

TEST(MutantsTest, EquivalentMutantNeverChangesAVerdict) {
  for (const MutantInfo& m : MutantCatalogue()) {
    if (!m.equivalent) continue;
    EXPECT_TRUE(Kills({.mutants = MutantSet(m.id)}).empty()) << m.name;
    sample::CaseSampler sampler(/*seed=*/7);
    for (int i = 0; i < 3000; ++i) {
      const Case c = sampler.Next();
      const check::CaseResult base = check::RunCase(c, {});
      const check::CaseResult mutated = check::RunCase(c, {.mutants = MutantSet(m.id)});
      ASSERT_EQ(base.verdict.violations.size(), mutated.verdict.violations.size())
          << m.name << " changed the verdict of\n" << PrintCase(c);
    }
  }
}

TEST(MutantsTest, GpuOnlyMutantsDoNotChangeTheHostSut) {
  for (const MutantInfo& m : MutantCatalogue()) {
    if (!m.gpu_only) continue;
    EXPECT_TRUE(Kills({.mutants = MutantSet(m.id)}).empty()) << m.name;
  }
}

TEST(MutantsTest, NamesAreUniqueAndResolve) {
  std::set<std::string_view> names;
  for (const MutantInfo& m : MutantCatalogue()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_EQ(FindMutant(m.name), m.id);
    EXPECT_FALSE(m.description.empty());
  }
  EXPECT_FALSE(FindMutant("no-such-mutant").has_value());
}

}  // namespace
}  // namespace r3::sut
