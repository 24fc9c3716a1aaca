// Every seeded bug must change the verdict of at least one corpus case, and
// the equivalent one must never change any.
#include "r3/sut/mutants.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <span>
#include <stdexcept>

#include "r3/case/case_format.h"
#include "r3/case/corpus.h"
#include "r3/check/run_case.h"
#include "r3/sample/case_sampler.h"
#include "r3check_config.h"

namespace r3::sut {
namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const char* sub : {"seeds", "regressions"}) {
    for (std::string& path : ListCaseFiles(std::string(R3CHECK_SOURCE_CORPUS) + "/" + sub)) {
      files.push_back(std::move(path));
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

TEST(MutantsTest, ASetIsEmptyOnlyWithNoMutantOn) {
  // properties/regressions_test skips a file saved against an empty set: a
  // set that called itself empty with a mutant on would skip every
  // regression saved against a mutant.
  EXPECT_TRUE(MutantSet().empty());
  for (const MutantInfo& m : MutantCatalogue()) {
    EXPECT_FALSE(MutantSet(m.id).empty()) << m.name;
  }
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

// Invariant 2 (capturer-holds) cannot fail on a valid case unless the
// capturer buffer is sized wrong: this mutant is what makes it fire.
TEST(MutantsTest, CapturerRowsPerShardViolatesCapturerHolds) {
  const SutOptions mutated{.mutants = MutantSet(Mutant::kCapturerRowsPerShard)};
  const Case warmup = LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) +
                                   "/seeds/tp2-dp2-warmup-odd-m.r3case");  // M = 7, T = 2
  const check::CaseResult r = check::RunCase(warmup, mutated);
  EXPECT_EQ(r.observation.capturer_rows, 4);
  ASSERT_TRUE(r.verdict.Violates(check::Invariant::kCapturerHolds));
  EXPECT_EQ(r.verdict.violations[0].invariant, check::Invariant::kCapturerHolds);
  EXPECT_EQ(r.verdict.violations[0].dp, 0);
  EXPECT_EQ(r.verdict.violations[1].invariant, check::Invariant::kCapturerHolds);
  EXPECT_EQ(r.verdict.violations[1].dp, 1);
  EXPECT_NE(r.observation.ranks[0].error.find("capturer buffer of 4 rows"), std::string::npos)
      << r.observation.ranks[0].error;
  // A rank with at most cdiv(M, T) rows still fits; TP 1 is unaffected.
  Case small = warmup;
  small.step.tokens = small.step.padded = {4, 4};
  EXPECT_TRUE(check::RunCase(small, mutated).verdict.ok());
  Case tp1 = warmup;
  tp1.config.tp = 1;
  EXPECT_TRUE(check::RunCase(tp1, mutated).verdict.ok());
}

// The capturer allocates its own buffer: an engine SUT's is the engine's,
// so the mutant does not resize it (and the CLI refuses it with an engine).
TEST(MutantsTest, CapturerRowsPerShardLeavesAnEnginesBufferAlone) {
  const Case warmup = LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) +
                                   "/seeds/tp2-dp2-warmup-odd-m.r3case");
  SutOptions options{.mutants = MutantSet(Mutant::kCapturerRowsPerShard)};
  const DispatchPlan plan = PlanDispatch(warmup, options.mutants);
  EXPECT_EQ(ObserveDispatch(warmup, options, plan, Capturer::kBuiltIn).capturer_rows, 4);
  EXPECT_EQ(ObserveDispatch(warmup, options, plan, Capturer::kEngine).capturer_rows, 7);
  EXPECT_TRUE(GetMutantInfo(Mutant::kCapturerRowsPerShard).host_capture);
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

// A mutant's id is its row's place in the catalogue: every place once, none
// dropped, and each handle names the host row it was given to.
TEST(MutantsTest, CatalogueNumbersEveryRowByItsPlace) {
  const std::span<const MutantInfo> all = MutantCatalogue();
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(all[i].id), i) << all[i].name;
    EXPECT_EQ(GetMutantInfo(all[i].id).name, all[i].name);
  }
  EXPECT_THROW(GetMutantInfo(static_cast<Mutant>(all.size())), std::out_of_range);
  EXPECT_EQ(GetMutantInfo(Mutant::kCapturerRowsPerShard).name, "capturer-rows-per-shard");
  EXPECT_TRUE(GetMutantInfo(MutantNamed("gpu-tail-rows")).gpu_only);
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
