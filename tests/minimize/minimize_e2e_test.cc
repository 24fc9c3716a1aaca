// `r3check minimize` as a user runs it: exit codes, stdout that is itself a
// case file, --save into corpus/regressions, byte-identical reruns, and the
// two kinds of failing input (a libFuzzer crash file and a RapidCheck
// counterexample) ending in the same case format.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "r3/case/case_format.h"
#include "r3check_config.h"
#include "tests/testing/run_shell.h"

namespace {

const std::string kCorpus = R3CHECK_SOURCE_CORPUS;

struct Result {
  int status = -1;
  std::string out;
};

std::string Bin() {
  const char* bin = std::getenv("R3CHECK_BIN");
  return bin != nullptr ? bin : "r3check";
}

// Runs `r3check ARGS` (stderr discarded unless `merge_stderr`).
Result R3check(const std::string& args, const std::string& env = "", bool merge_stderr = false) {
  const std::string cmd =
      env + " '" + Bin() + "' " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  const r3::testing::ShellResult shell = r3::testing::RunShell(cmd);
  return {shell.status, shell.out};
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("r3min-" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

TEST(MinimizeE2eTest, FailingCaseMinimizesToACaseFileWithExitZero) {
  const Result r = R3check("minimize --mutant no-sp-trim " + kCorpus + "/seeds/tp2-dp2-eager.r3case");
  ASSERT_EQ(r.status, 0) << r.out;
  const r3::Case c = r3::ParseCase(r.out, "stdout");
  EXPECT_EQ(c.config.dp, 2);
  EXPECT_EQ(c.config.tp, 2);
  EXPECT_NE(r.out.find("# Fields that can vary without changing the failure:"), std::string::npos);
}

TEST(MinimizeE2eTest, ATinyBudgetBoundsTheWholeRunOfALargeCase) {
  // DP 256 x TP 16: before the field report honoured the budget, --budget-ms 1
  // still probed every field of the unshrunk case (tens of seconds). Now the
  // run stops at the budget and says what it left out.
  std::string tokens;
  for (int d = 0; d < 256; ++d) tokens += " " + std::to_string(1 + d % 7);
  const std::string path = WriteTemp(
      "big.r3case", "r3case 1\ndp 256\ntp 16\nep on\ndispatch naive\nsp auto\n"
                    "max_num_batched_tokens 64\ntop_k 2\nnum_experts 8\nnum_layers 1\ntokens" +
                        tokens + "\n");
  const Result r = R3check("minimize --budget-ms 1 --mutant no-sp-trim " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("budget exhausted, may shrink further"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# Field report cut short by the budget"), std::string::npos) << r.out;
  EXPECT_NO_THROW(r3::ParseCase(r.out, "stdout")) << "the output is still a case file";
}

TEST(MinimizeE2eTest, OutputIsByteIdenticalAcrossRuns) {
  const std::string args = "minimize --mutant floor-shard-size " + kCorpus +
                           "/seeds/tp4-dp3-idle-rank.r3case";
  const Result a = R3check(args);
  const Result b = R3check(args);
  ASSERT_EQ(a.status, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST(MinimizeE2eTest, PassingCaseExitsOne) {
  const Result r = R3check("minimize " + kCorpus + "/seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("nothing to minimize"), std::string::npos) << r.out;
}

TEST(MinimizeE2eTest, KnownFindingExitsOne) {
  EXPECT_EQ(R3check("minimize " + kCorpus + "/findings/internal-sp-decode-pad.r3case").status, 1);
}

TEST(MinimizeE2eTest, BadInputExitsTwoWithOneLine) {
  const std::string bad = WriteTemp("bad.r3case", "r3case 1\ndp 0\n");
  Result r = R3check("minimize " + bad, "", /*merge_stderr=*/true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find(":2: dp: "), std::string::npos) << r.out;
  EXPECT_EQ(R3check("minimize --mutant nope " + bad).status, 2);
  EXPECT_EQ(R3check("minimize --budget-ms 0 " + kCorpus + "/seeds/tp2-dp2-eager.r3case").status, 2);
  EXPECT_EQ(R3check("minimize --invariant 8 " + kCorpus + "/seeds/tp2-dp2-eager.r3case").status, 2);
  EXPECT_EQ(R3check("minimize /no/such/file.r3case").status, 2);
}

// docs/fuzzing.md: `--budget-ms` defaults to 10 s.
TEST(MinimizeE2eTest, HelpShowsTheDefaultTimeBudget) {
  const Result r = R3check("minimize --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("time budget in milliseconds (default 10000)"), std::string::npos) << r.out;
}

TEST(MinimizeE2eTest, SaveWritesARegressionCaseWithAHeader) {
  const auto dir = std::filesystem::temp_directory_path() / "r3min-corpus";
  std::filesystem::remove_all(dir);
  const std::string env = "R3CHECK_CORPUS='" + dir.string() + "'";
  const std::string input = kCorpus + "/seeds/tp2-dp2-eager.r3case";
  const Result r = R3check("minimize --mutant tp-major-ep-order --save " + input, env);
  ASSERT_EQ(r.status, 0);
  const auto saved = dir / "regressions" / "tp-major-ep-order-pr50874-inv3-4.r3case";
  std::ifstream in(saved);
  ASSERT_TRUE(in.good()) << saved;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), r.out);  // the header comment is the explanation
  EXPECT_EQ(text.str().rfind("# r3check minimize: invariants 3 rows-exact", 0), 0u);
  // The saved case is a regression: it passes today's SUT and kills the mutant.
  EXPECT_EQ(R3check("check " + saved.string()).status, 0);
  EXPECT_EQ(R3check("check --mutant tp-major-ep-order " + saved.string()).status, 1);
  // A named save; the same name with other content is refused.
  EXPECT_EQ(R3check("minimize --mutant tp-major-ep-order --save mine " + input, env).status, 0);
  EXPECT_TRUE(std::filesystem::exists(dir / "regressions" / "mine.r3case"));
  EXPECT_EQ(R3check("minimize --mutant no-sp-trim --save mine " + input, env).status, 2);
  EXPECT_EQ(R3check("minimize --mutant no-sp-trim --save ../evil " + input, env).status, 2);
  std::filesystem::remove_all(dir);
}

// A libFuzzer crash file is the raw input bytes (any spacing, comments,
// explicit defaults); a RapidCheck counterexample is printed by PrintCase.
// Both are r3case text and minimize to the same canonical case.
TEST(MinimizeE2eTest, CrashFileAndCounterexampleMinimizeToTheSameCase) {
  const std::string crash = WriteTemp(
      "crash-0123abcd",
      "r3case 1\n# mutated by libFuzzer\ndp 3\ntp   4\nep on\ndispatch naive\nsp on\n"
      "max_num_batched_tokens 64\ntop_k 4\nnum_experts 128\nnum_layers 2\ntokens 9 0 2\n"
      "padded 12 0 3\n");
  const std::string counterexample = WriteTemp(
      "rapidcheck.r3case",
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8192\n"
      "top_k 8\nnum_experts 256\nnum_layers 1\ntokens 5 3\n");
  const Result a = R3check("minimize --mutant no-sp-trim " + crash);
  const Result b = R3check("minimize --mutant no-sp-trim " + counterexample);
  ASSERT_EQ(a.status, 0);
  ASSERT_EQ(b.status, 0);
  EXPECT_EQ(r3::ParseCase(a.out, "crash"), r3::ParseCase(b.out, "counterexample"));
  EXPECT_EQ(r3::PrintCase(r3::ParseCase(a.out, "crash")),
            a.out.substr(a.out.find("r3case 1\n")));
}

}  // namespace
