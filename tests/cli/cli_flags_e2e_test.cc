// End-to-end: every command's flags and failure paths, not only its happy
// path (cli_e2e_test.cc has those; the engine flags and `engines` are in
// tests/engine/engine_e2e_test.cc). Exit codes when several files are
// checked, each flag on each command that takes it, unknown values, missing
// and bad input, the corpus options of verify and minimize --save.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include "r3check_config.h"
#include "tests/testing/r3check_runner.h"
#include "tests/testing/run_shell.h"

namespace {

using Result = r3::testing::R3checkResult;
using r3::testing::TempPath;

const std::string kCorpus = R3CHECK_SOURCE_CORPUS;

// Runs `r3check ARGS` with the source corpus as working directory.
Result R3check(const std::string& args, const std::string& stdin_text = "",
               const std::string& env = "") {
  return r3::testing::RunR3check(kCorpus, args, stdin_text, env);
}

int Lines(const std::string& text) { return r3::testing::CountLines(text); }

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

// A scratch corpus folder: `files` maps "seeds/x.r3case" to a source file
// under the real corpus (copied) or to text (written when it has a newline).
class ScratchCorpus {
 public:
  explicit ScratchCorpus(const std::string& name,
                         const std::vector<std::pair<std::string, std::string>>& files)
      : dir_(TempPath(name)) {
    std::filesystem::remove_all(dir_);
    for (const char* sub : {"regressions", "seeds", "findings"}) {
      std::filesystem::create_directories(dir_ / sub);
    }
    for (const auto& [to, from] : files) {
      if (from.find('\n') != std::string::npos) {
        std::ofstream(dir_ / to) << from;
      } else {
        std::filesystem::copy_file(kCorpus + "/" + from, dir_ / to);
      }
    }
  }
  ~ScratchCorpus() { std::filesystem::remove_all(dir_); }
  std::string path() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

const std::string kBadCase = "r3case 1\ndp 2\ntp 0\n";

// --- several files, one command ---------------------------------------------

TEST(CliFlagsE2eTest, CheckOnePassOneFailIsExitOne) {
  // ep-off has no SP padding, so no-sp-trim cannot hurt it; eager it does.
  const Result r = R3check("check --mutant no-sp-trim seeds/tp2-dp2-ep-off.r3case "
                           "seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_TRUE(Has(r.out, "seeds/tp2-dp2-ep-off.r3case: PASS")) << r.out;
  EXPECT_TRUE(Has(r.out, "seeds/tp2-dp2-eager.r3case: FAIL")) << r.out;
  EXPECT_TRUE(Has(r.out, "1 passed, 1 failed")) << r.out;
}

TEST(CliFlagsE2eTest, CheckAllPassingFilesIsExitZero) {
  const Result r = R3check("check seeds/tp2-dp2-ep-off.r3case seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Has(r.out, "2 passed, 0 failed")) << r.out;
}

TEST(CliFlagsE2eTest, CheckOneBadFileAmongGoodOnesIsExitTwoAndNoVerdict) {
  const std::string bad = WriteTemp("bad-among-good.r3case", kBadCase);
  // Even under a mutant that fails the good files: bad input wins, nothing judged.
  for (const std::string flags : {"", "--mutant no-sp-trim "}) {
    const Result r = R3check("check " + flags + "seeds/tp2-dp2-eager.r3case " + bad +
                             " seeds/tp2-dp2-ep-off.r3case");
    EXPECT_EQ(r.status, 2) << flags << r.out;
    EXPECT_EQ(r.out, "") << flags;
    EXPECT_EQ(r.err, bad + ":3: tp: value 0 is out of range [1, 64]\n") << flags;
  }
}

TEST(CliFlagsE2eTest, CheckMissingFileIsExitTwoAndNoVerdict) {
  const Result r = R3check("check seeds/tp2-dp2-eager.r3case seeds/no-such-case.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Lines(r.err), 1);
  EXPECT_TRUE(Has(r.err, "no-such-case.r3case")) << r.err;
}

TEST(CliFlagsE2eTest, CheckNeedsACase) {
  const Result r = R3check("check");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(Has(r.err, "CASE is required")) << r.err;
}

TEST(CliFlagsE2eTest, CheckFileAndStandardInputTogether) {
  const Result r = R3check("check --mutant snapshot-int8 seeds/dp1-tp1-graph.r3case -",
                           r3::testing::Slurp(kCorpus + "/seeds/tp2-dp2-eager.r3case"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(Has(r.out, "<stdin>: FAIL")) << r.out;
}

// --- --policy, --sut, --mutant on check / explain / minimize / verify ------------

TEST(CliFlagsE2eTest, PolicyFlagOnCheck) {
  Result r = R3check("check --policy tight seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "PASS (sut vllm-post-50874, policy tight)")) << r.out;
  r = R3check("check --policy legacy seeds/tp2-dp2-warmup.r3case seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(Has(r.out, "1 passed, 1 failed")) << r.out;
  r = R3check("check --policy pr50875 seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --policy: unknown policy 'pr50875'\n");
}

TEST(CliFlagsE2eTest, SutFlagOnCheck) {
  // No SP padding in ep-off: the pre-#50874 capture is right there.
  Result r = R3check("check --sut vllm-pre-50874 seeds/tp2-dp2-ep-off.r3case");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "PASS (sut vllm-pre-50874, policy pr50874)")) << r.out;
  r = R3check("check --sut vllm-pre-50874 seeds/tp2-dp2-lone-decode.r3case");
  EXPECT_EQ(r.status, 1) << r.out;
  r = R3check("check --sut vllm-post-50875 seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err), 1);
  EXPECT_TRUE(Has(r.err, "--sut: unknown system under test 'vllm-post-50875'")) << r.err;
}

// This build has no usable GPU here (or no CUDA at all): --gpu says so,
// exit 2, never a silent fallback to the host SUT.
TEST(CliFlagsE2eTest, EachEngineFlagAloneIsRefusedForTheBuiltInSut) {
  // Each one on its own: a flag that would silently do nothing is exit 2.
  for (const char* flag : {"--engine-python /usr/bin/python3", "--engine-launch torchrun",
                           "--nproc 2", "--engine-launch-arg x", "--engine-device cuda",
                           "--engine-timeout 5", "--engine-base x"}) {
    const Result r = R3check(std::string("check ") + flag + " seeds/tp2-dp2-eager.r3case");
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_EQ(r.err, "r3check: --engine-*/--nproc: apply to an engine SUT (--sut vllm:PATH | "
                     "sglang:PATH | vllm-ascend:PATH | exec:CMD), not to vllm-post-50874\n")
        << flag;
    EXPECT_EQ(r.out, "") << flag;
  }
}

TEST(CliFlagsE2eTest, GpuFlagWithAnEngineIsRefusedBeforeTheEngineStarts) {
  // exec:true would fail its hello: the refusal comes first, for both commands.
  for (const char* cmd : {"check --gpu --sut exec:true seeds/tp2-dp2-eager.r3case",
                          "verify --gpu --sut exec:true --cases 1",
                          "explain --gpu --sut exec:true seeds/tp2-dp2-eager.r3case",
                          "minimize --gpu --sut exec:true seeds/tp2-dp2-eager.r3case",
                          "sizing --gpu --sut exec:true seeds/tp2-dp2-eager.r3case"}) {
    const Result r = R3check(cmd);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_EQ(r.err, "r3check: --gpu: runs the built-in SUT's capture on the GPU; to run an "
                     "engine's own code on GPUs use --engine-launch torchrun --engine-device cuda\n")
        << cmd;
  }
}

TEST(CliFlagsE2eTest, GpuFlagWithoutAGpuIsExitTwo) {
  // Skips only where a GPU can really run the step: a build without CUDA, or
  // a machine without a GPU, must refuse (a skip on "exit 0" would pass a
  // --gpu that silently checked on the host).
  const bool gpu_here = R3CHECK_BUILT_WITH_GPU &&
                        r3::testing::RunShell("nvidia-smi -L >/dev/null 2>&1").status == 0;
  // Every command that judges cases takes --gpu (one producer seam).
  for (const char* cmd : {"check --gpu seeds/tp2-dp2-eager.r3case", "verify --gpu --cases 1",
                          "explain --gpu seeds/tp2-dp2-eager.r3case",
                          "minimize --gpu --mutant gpu-tail-rows seeds/tp2-dp2-eager.r3case",
                          "sizing --gpu seeds/tp2-dp2-warmup.r3case"}) {
    const Result r = R3check(cmd);
    if (gpu_here) GTEST_SKIP() << "a GPU is usable here";
    EXPECT_EQ(r.status, 2) << cmd << r.out;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_TRUE(Has(r.err, "r3check: --gpu: ")) << r.err;
    EXPECT_FALSE(Has(r.out, "verify: OK")) << r.out;
  }
  EXPECT_EQ(R3check("check --gpu-ranks sideways seeds/tp2-dp2-eager.r3case").status, 2);
  // The other GPU flags exist on both commands (a missing one would be
  // "unknown option", not the --gpu message).
  for (const char* cmd : {"check --gpu --gpu-graph --gpu-ranks emulated seeds/tp2-dp2-eager.r3case",
                          "verify --gpu --gpu-graph --gpu-ranks auto --cases 1"}) {
    const Result r = R3check(cmd);
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_TRUE(Has(r.err, "r3check: --gpu: ")) << cmd << r.err;
  }
}

TEST(CliFlagsE2eTest, ExplainTakesMutantPolicyAndSut) {
  Result r = R3check("explain --json --mutant no-sp-trim seeds/tp2-dp2-eager.r3case");
  ASSERT_EQ(r.status, 1) << r.err;  // a failing case explains, exit 1
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"][0]["ok"], false);
  EXPECT_EQ(j["ranks"][0]["captured"],
            nlohmann::json::parse(R"([{"dp":0,"from":0,"count":5},{"pad":1}])"));

  r = R3check("explain --json --policy legacy seeds/tp2-dp2-warmup.r3case");
  ASSERT_EQ(r.status, 1) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["replay"]["policy"], "legacy");
  EXPECT_EQ(j["replay"]["buffer_rows"], 8192);
  EXPECT_EQ(j["replay"]["fits"], false);

  r = R3check("explain --json --sut vllm-pre-50874 seeds/tp2-dp2-eager.r3case");
  ASSERT_EQ(r.status, 1) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"][0]["branch"], "error");
  EXPECT_TRUE(j["ranks"][0]["error"].is_string());

  r = R3check("explain --mutant no-sp-trim seeds/tp2-dp2-eager.r3case");  // text
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(Has(r.out, "mutant no-sp-trim")) << r.out;
}

TEST(CliFlagsE2eTest, ExplainFailurePaths) {
  const std::string bad = WriteTemp("explain-bad.r3case", kBadCase);
  Result r = R3check("explain " + bad);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, bad + ":3: tp: value 0 is out of range [1, 64]\n");
  EXPECT_EQ(R3check("explain").status, 2);
  EXPECT_EQ(R3check("explain seeds/no-such-case.r3case").status, 2);
  EXPECT_EQ(R3check("explain seeds/tp2-dp2-eager.r3case seeds/tp2-dp2-ep-off.r3case").status, 2);
  EXPECT_EQ(R3check("explain --mutant nope seeds/tp2-dp2-eager.r3case").status, 2);
  EXPECT_EQ(R3check("explain --sut nope seeds/tp2-dp2-eager.r3case").status, 2);
  r = R3check("explain --json -", r3::testing::Slurp(kCorpus + "/seeds/tp2-dp2-eager.r3case"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["N"], nlohmann::json({5, 3}));
}

// --- sizing -----------------------------------------------------------------

TEST(CliFlagsE2eTest, SizingMutantFlagChangesThePolicyRows) {
  // M 7, D 2, T 2, EP: the bound is 2*2*cdiv(7,2) = 16 rows; pr50874 gives
  // 7*4 = 28, sized by D (the mutant) 14, which does not fit.
  Result r = R3check("sizing --json seeds/tp2-dp2-warmup-odd-m.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["required_rows"], 16);
  EXPECT_EQ(j["policies"]["pr50874"]["rows"], 28);
  EXPECT_EQ(j["policies"]["pr50874"]["safe"], true);
  r = R3check("sizing --json --mutant size-by-dp-with-ep seeds/tp2-dp2-warmup-odd-m.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["policies"]["pr50874"]["rows"], 14);
  EXPECT_EQ(j["policies"]["pr50874"]["safe"], false);
  EXPECT_EQ(j["policies"]["legacy"]["rows"], 7);
  EXPECT_EQ(j["policies"]["tight"]["rows"], 16);
}

TEST(CliFlagsE2eTest, SizingTextAndFailurePaths) {
  Result r = R3check("sizing seeds/tp2-dp2-warmup-odd-m.r3case");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(Has(r.out, "exact bound: 16 rows")) << r.out;
  r = R3check("sizing -", r3::testing::Slurp(kCorpus + "/seeds/tp2-dp2-warmup.r3case"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "exact bound: 16384 rows")) << r.out;
  const std::string bad = WriteTemp("sizing-bad.r3case", kBadCase);
  r = R3check("sizing " + bad);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, bad + ":3: tp: value 0 is out of range [1, 64]\n");
  EXPECT_EQ(R3check("sizing").status, 2);
  EXPECT_EQ(R3check("sizing seeds/no-such-case.r3case").status, 2);
  EXPECT_EQ(R3check("sizing --mutant nope seeds/tp2-dp2-warmup.r3case").status, 2);
  // sizing reports every policy: --policy is not one of its flags.
  EXPECT_EQ(R3check("sizing --policy legacy seeds/tp2-dp2-warmup.r3case").status, 2);
}

// --junit/--svg/--save-failures name the system's reason for a file they
// cannot write, whichever errno it is (EPERM, errno 1, included).
TEST(CliFlagsE2eTest, AnOutputFileThatCannotBeWrittenNamesTheReason) {
  Result r = R3check("check --junit /no/such/dir/r.xml seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --junit: cannot write /no/such/dir/r.xml (No such file or directory)\n");
  // An immutable file: even root gets EPERM (where chattr +i works).
  const std::string locked = WriteTemp("immutable.xml", "");
  if (r3::testing::RunShell("chattr +i " + locked + " 2>/dev/null").status != 0) {
    GTEST_SKIP() << "chattr +i does not work here";
  }
  r = R3check("check --junit " + locked + " seeds/tp2-dp2-eager.r3case");
  r3::testing::RunShell("chattr -i " + locked);
  std::filesystem::remove(locked);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --junit: cannot write " + locked + " (Operation not permitted)\n");
}

// --- verify -----------------------------------------------------------------

TEST(CliFlagsE2eTest, VerifyCasesFlag) {
  Result r = R3check("verify --cases 0");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(Has(r.out, ", 0 generated cases, seed 1")) << r.out;
  EXPECT_TRUE(Has(r.out, "generated           0")) << r.out;
  r = R3check("verify --cases 7");
  EXPECT_TRUE(Has(r.out, "generated           7")) << r.out;
  EXPECT_EQ(R3check("verify --cases -1").status, 2);
  EXPECT_EQ(R3check("verify --cases many").status, 2);
  // The bound is 2^40 exactly: one past it is a flag error; at it, the run
  // gets as far as the (missing) corpus.
  r = R3check("verify --cases 1099511627777 --corpus /nonexistent-r3-corpus");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(Has(r.err, "--cases")) << r.err;
  r = R3check("verify --cases 1099511627776 --corpus /nonexistent-r3-corpus");
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(Has(r.err, "--cases")) << r.err;
  EXPECT_TRUE(Has(r.err, "/nonexistent-r3-corpus")) << r.err;
}

TEST(CliFlagsE2eTest, VerifySummaryCountsKnownFindings) {
  // One passing seed and the two findings: the total row adds the known ones,
  // and the findings are named with their violation counts.
  ScratchCorpus corpus("verify-summary-corpus",
                       {{"seeds/a.r3case", "seeds/tp2-dp2-eager.r3case"},
                        {"findings/a.r3case", "findings/internal-sp-decode-pad.r3case"},
                        {"findings/b.r3case", "findings/replay-int16-experts.r3case"}});
  const Result r = R3check("verify --cases 0 --corpus " + corpus.path());
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Has(r.out, "\nfindings            2        0        2        0\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "\ntotal               3        1        2        0\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "known-finding violations (see corpus/findings/): "
                         "internal-sp-decode-pad x5 replay-int16-experts x1\n"))
      << r.out;
}

TEST(CliFlagsE2eTest, HelpStatesTheEngineTimeoutDefault) {
  const Result r = R3check("check --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(Has(r.out, "(default 60)")) << r.out;
}

TEST(CliFlagsE2eTest, VerifySeedFlagPicksTheGeneratedCases) {
  // Under a mutant the failing generated cases are printed: they name the
  // seed, and other seeds fail on other cases.
  ScratchCorpus empty("verify-seed-corpus", {});
  const std::string base = "verify --cases 40 --mutant no-sp-trim --corpus " + empty.path();
  const Result a = R3check(base + " --seed 5");
  const Result b = R3check(base + " --seed 5");
  const Result c = R3check(base + " --seed 6");
  EXPECT_EQ(a.status, 1);
  EXPECT_EQ(a.out, b.out);
  EXPECT_TRUE(Has(a.out, ", 40 generated cases, seed 5")) << a.out;
  EXPECT_TRUE(Has(a.out, "(seed 5): FAIL")) << a.out;
  EXPECT_FALSE(Has(a.out, "(seed 6)")) << a.out;
  EXPECT_TRUE(Has(c.out, "(seed 6): FAIL")) << c.out;
  // The failing cases themselves differ, not only their labels.
  auto cases = [](const std::string& out) {
    std::string text;
    for (size_t at = out.find("--- case ---\n"); at != std::string::npos;
         at = out.find("--- case ---\n", at + 1)) {
      text += out.substr(at, out.find("------------\n", at) - at);
    }
    return text;
  };
  EXPECT_NE(cases(a.out), "");
  EXPECT_NE(cases(a.out), cases(c.out));
  // Not wrapped or clamped into another seed: a usage error.
  for (const char* bad : {"-3", "18446744073709551616", "5x", "seven"}) {
    const Result r = R3check(std::string("verify --cases 1 --seed ") + bad);
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_TRUE(Has(r.err, "--seed: must be an integer in [0, 2^64 - 1]")) << r.err;
  }
  EXPECT_TRUE(Has(R3check("verify --cases 1 --seed 18446744073709551615").out,
                  "seed 18446744073709551615"));
}

TEST(CliFlagsE2eTest, VerifyCorpusFlag) {
  ScratchCorpus corpus("verify-corpus", {{"regressions/no-sp-trim.r3case",
                                          "regressions/no-sp-trim.r3case"},
                                         {"seeds/ep-off.r3case", "seeds/tp2-dp2-ep-off.r3case"}});
  Result r = R3check("verify --cases 0 --corpus " + corpus.path());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "corpus " + corpus.path() + ", 0 generated cases")) << r.out;
  EXPECT_TRUE(Has(r.out, "regressions         1        1")) << r.out;
  EXPECT_TRUE(Has(r.out, "seeds               1        1")) << r.out;
  // Under the mutant the regression fails, the seed (no SP padding) does not.
  r = R3check("verify --cases 0 --mutant no-sp-trim --corpus " + corpus.path());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(Has(r.out, corpus.path() + "/regressions/no-sp-trim.r3case: FAIL")) << r.out;
  EXPECT_FALSE(Has(r.out, "ep-off.r3case: FAIL")) << r.out;
  EXPECT_TRUE(Has(r.out, "verify: FAILED")) << r.out;
  // The same corpus from the environment.
  r = R3check("verify --cases 0", "", "R3CHECK_CORPUS='" + corpus.path() + "'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "corpus " + corpus.path() + ",")) << r.out;
}

TEST(CliFlagsE2eTest, VerifyCorpusReadsOnlyR3caseFiles) {
  // Notes and sub-folders beside the cases are not cases, whatever their names.
  ScratchCorpus corpus("verify-only-cases-corpus",
                       {{"seeds/eager.r3case", "seeds/tp2-dp2-eager.r3case"},
                        {"seeds/README.md", "how these seeds were chosen\n"}});
  std::filesystem::create_directories(corpus.path() + "/seeds/old.r3case");
  const Result r = R3check("verify --cases 0 --corpus " + corpus.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Has(r.out, "seeds               1        1")) << r.out;
}

TEST(CliFlagsE2eTest, VerifyRunsACorpusFolderInNameOrder) {
  // Created in one order, listed by the file system in another: verify's
  // output must not depend on either.
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* name : {"m", "c", "x", "a", "q", "f", "z", "b"}) {
    files.push_back({"seeds/" + std::string(name) + ".r3case", "regressions/no-sp-trim.r3case"});
  }
  ScratchCorpus corpus("verify-order-corpus", files);
  const Result r = R3check("verify --cases 0 --mutant no-sp-trim --corpus " + corpus.path());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  size_t at = 0;
  for (const char* name : {"a", "b", "c", "f", "m", "q", "x", "z"}) {
    const size_t next = r.out.find(corpus.path() + "/seeds/" + name + ".r3case: FAIL", at);
    ASSERT_NE(next, std::string::npos) << name << " missing or out of order:\n" << r.out;
    at = next;
  }
}

TEST(CliFlagsE2eTest, VerifyCorpusFailurePaths) {
  // A folder that does not exist: exit 2, not an OK over generated cases only.
  Result r = R3check("verify --cases 5 --corpus " + TempPath("no-such-corpus"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(Has(r.err, "--corpus: no such folder")) << r.err;
  EXPECT_FALSE(Has(r.out, "verify: OK")) << r.out;
  r = R3check("verify --cases 5", "", "R3CHECK_CORPUS='" + TempPath("no-such-corpus") + "'");
  EXPECT_EQ(r.status, 2) << r.out;
  // A bad case file in it: exit 2, one line naming the file.
  ScratchCorpus bad("verify-bad-corpus", {{"seeds/bad.r3case", kBadCase}});
  r = R3check("verify --cases 0 --corpus " + bad.path());
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.err, bad.path() + "/seeds/bad.r3case:3: tp: value 0 is out of range [1, 64]\n");
  // A pinned finding that passes has stopped reproducing: a failure.
  ScratchCorpus finding("verify-finding-corpus", {{"findings/gone.r3case",
                                                   "seeds/tp2-dp2-ep-off.r3case"}});
  r = R3check("verify --cases 0 --corpus " + finding.path());
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "gone.r3case: FAIL, the known finding no longer reproduces")) << r.out;
}

TEST(CliFlagsE2eTest, VerifyTextIsTheHeaderTheTableAndTheVerdict) {
  ScratchCorpus corpus("verify-text-corpus", {{"seeds/a.r3case", "seeds/tp2-dp2-eager.r3case"}});
  const Result r = R3check("verify --cases 2 --corpus " + corpus.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "r3check verify: sut vllm-post-50874, policy pr50874\n"
            "corpus " + corpus.path() + ", 2 generated cases, seed 1\n"
            "\n"
            "source          cases     pass    known     fail\n"
            "regressions         0        0        0        0\n"
            "seeds               1        1        0        0\n"
            "findings            0        0        0        0\n"
            "generated           2        2        0        0\n"
            "total               3        3        0        0\n"
            "verify: OK\n");
}

TEST(CliFlagsE2eTest, VerifyJsonHasEveryDocumentedField) {
  // docs/cli.md: options, corpus, seed, sources and total, known_findings,
  // failures, ok; in this order, each source under its own name.
  ScratchCorpus corpus("verify-json-corpus",
                       {{"regressions/a.r3case", "regressions/no-sp-trim.r3case"},
                        {"seeds/a.r3case", "seeds/tp2-dp2-eager.r3case"},
                        {"findings/a.r3case", "findings/internal-sp-decode-pad.r3case"}});
  Result r = R3check("verify --cases 0 --json --corpus " + corpus.path());
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"command", "options", "corpus", "seed",
                                            "generated_cases", "sources", "total",
                                            "known_findings", "failures", "ok"}));
  EXPECT_EQ(j["sources"].dump(),
            R"({"regressions":{"cases":1,"pass":1,"known":0,"fail":0},)"
            R"("seeds":{"cases":1,"pass":1,"known":0,"fail":0},)"
            R"("findings":{"cases":1,"pass":0,"known":1,"fail":0},)"
            R"("generated":{"cases":0,"pass":0,"known":0,"fail":0}})");
  EXPECT_EQ(j["total"].dump(), R"({"cases":3,"pass":2,"known":1,"fail":0})");
  EXPECT_EQ(j["known_findings"].dump(), R"({"internal-sp-decode-pad":5})");
  EXPECT_EQ(j["failures"].dump(), "[]");
  EXPECT_EQ(j["ok"], true);
  // Under a bug: two failures (the regression and the seed), not OK.
  r = R3check("verify --cases 0 --json --mutant no-sp-trim --corpus " + corpus.path());
  ASSERT_EQ(r.status, 1) << r.err;
  j = nlohmann::ordered_json::parse(r.out);
  ASSERT_EQ(j["failures"].size(), 2u) << r.out;
  EXPECT_EQ(j["failures"][0]["source"], corpus.path() + "/regressions/a.r3case");
  EXPECT_EQ(j["failures"][1]["source"], corpus.path() + "/seeds/a.r3case");
  EXPECT_EQ(j["ok"], false);
}

TEST(CliFlagsE2eTest, VerifyJsonNamesAFindingThatNoLongerReproduces) {
  ScratchCorpus corpus("verify-gone-json-corpus",
                       {{"findings/gone.r3case", "seeds/tp2-dp2-ep-off.r3case"}});
  const Result r = R3check("verify --cases 0 --json --corpus " + corpus.path());
  ASSERT_EQ(r.status, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sources"]["findings"].dump(), R"({"cases":1,"fail":1,"known":0,"pass":0})");
  ASSERT_EQ(j["failures"].size(), 1u) << r.out;
  const nlohmann::json& f = j["failures"][0];
  const std::string source = corpus.path() + "/findings/gone.r3case";
  EXPECT_EQ(f["source"], source);
  EXPECT_EQ(f["group"], "findings");
  EXPECT_EQ(f["verdict"], "fail");
  EXPECT_EQ(f["ok"], false);
  EXPECT_EQ(f["case"]["ep"], false);
  EXPECT_EQ(f["case_text"], r3::testing::Slurp(kCorpus + "/seeds/tp2-dp2-ep-off.r3case")
                                .substr(r3::testing::Slurp(kCorpus + "/seeds/tp2-dp2-ep-off.r3case")
                                            .find("r3case 1")));
  EXPECT_EQ(f["violations"].dump(), "[]");
  EXPECT_EQ(f["report"], source + ": FAIL, the known finding no longer reproduces (sut "
                                  "vllm-post-50874, policy pr50874)\n");
  // The text table counts it as a failure of the findings.
  const Result text = R3check("verify --cases 0 --corpus " + corpus.path());
  EXPECT_TRUE(Has(text.out, "\nfindings            1        0        0        1\n")) << text.out;
}

// Runs verify --json --save-failures under no-sp-trim; returns the names it
// saved and the names it should have: one per failing generated case.
std::pair<std::set<std::string>, std::set<std::string>> SavedAndFailing(
    const std::string& corpus, const std::string& seed) {
  const std::string dir = TempPath("verify-save-dir");
  std::filesystem::remove_all(dir);
  const Result r = R3check("verify --json --mutant no-sp-trim --cases 20 --seed " + seed +
                           " --corpus " + corpus + " --save-failures " + dir);
  EXPECT_EQ(r.status, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::set<std::string> failing;
  for (const nlohmann::json& f : j["failures"]) {
    const std::string source = f["source"];
    std::smatch m;
    if (std::regex_match(source, m, std::regex(R"(generated case (\d+) \(seed \d+\))"))) {
      failing.insert("generated-seed" + seed + "-case" + m[1].str() + ".r3case");
    }
  }
  std::set<std::string> saved;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    saved.insert(entry.path().filename().string());
  }
  std::filesystem::remove_all(dir);
  return {saved, failing};
}

TEST(CliFlagsE2eTest, VerifySaveFailuresWritesEachFailingGeneratedCaseOnly) {
  // Seed 11's generated case 0 fails under no-sp-trim: it is saved too.
  ScratchCorpus empty("verify-save-empty-corpus", {});
  auto [saved, failing] = SavedAndFailing(empty.path(), "11");
  EXPECT_TRUE(failing.count("generated-seed11-case0.r3case"));
  EXPECT_EQ(saved, failing);
  // Seed 1's case 0 passes; two failing regressions are no generated cases
  // and get no file (not as case -1, 0 or 1 either).
  ScratchCorpus corpus("verify-save-corpus",
                       {{"regressions/a.r3case", "regressions/no-sp-trim.r3case"},
                        {"regressions/b.r3case", "seeds/tp2-dp2-eager.r3case"}});
  std::tie(saved, failing) = SavedAndFailing(corpus.path(), "1");
  EXPECT_FALSE(failing.empty());
  EXPECT_FALSE(failing.count("generated-seed1-case0.r3case"));
  EXPECT_EQ(saved, failing);
}

TEST(CliFlagsE2eTest, VerifyReplayIndexBounds) {
  // Index 0 is the first generated case; 2^40 is past --cases' range.
  Result r = R3check("verify --replay 1:0");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("generated case 0 (seed 1): PASS", 0), 0u) << r.out;
  // (under timeout: taking 2^40 would draw cases for days)
  const std::string bin = std::getenv("R3CHECK_BIN");
  const r3::testing::ShellResult past = r3::testing::RunShell(
      "timeout 10 " + bin + " verify --replay 1:1099511627776 2>&1 >/dev/null");
  EXPECT_EQ(past.status, 2);
  EXPECT_EQ(past.out, "r3check: --replay: SEED:INDEX (as in 'generated case INDEX (seed SEED)'), "
                      "not '1:1099511627776'\n");
  // 2^40 - 1 is taken: it is still drawing the cases before it when stopped.
  const r3::testing::ShellResult last = r3::testing::RunShell(
      "timeout 2 " + bin + " verify --replay 1:1099511627775 >/dev/null 2>&1");
  EXPECT_EQ(last.status, 124);
}

TEST(CliFlagsE2eTest, VerifyReplayWritesJunitAndJson) {
  const std::string xml = TempPath("replay.xml");
  std::filesystem::remove(xml);
  Result r = R3check("verify --replay 1:2 --junit " + xml);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string junit = r3::testing::Slurp(xml);
  EXPECT_TRUE(Has(junit, "<testsuites name=\"r3check-verify\" tests=\"1\" failures=\"0\">\n"
                         "  <testsuite name=\"r3check-verify.generated\" tests=\"1\" failures=\"0\">\n"
                         "    <testcase classname=\"r3check-verify.generated\" "
                         "name=\"generated case 2 (seed 1)\"/>\n"))
      << junit;
  r = R3check("verify --replay 1:2 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["source"], "generated case 2 (seed 1)");
  EXPECT_EQ(j["group"], "generated");
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["case_text"].get<std::string>().rfind("r3case 1\n", 0), 0u) << r.out;
}

// An adapter slowed to 1/256 s per case (a filter in front of
// tests/engine/misbehaving_adapter.py, which behaves under an unknown --mode):
// each batch of 256 generated cases takes about a second, and a progress line
// comes after the first batch that ends 2 s or more after the last line,
// never after the last batch (the closing line says it all).
TEST(CliFlagsE2eTest, VerifyProgressLinesEveryTwoSeconds) {
  ScratchCorpus corpus("verify-progress-corpus", {});
  const std::string slow = WriteTemp("slow_filter.py",
                                     "import json, sys, time\n"
                                     "for line in sys.stdin:\n"
                                     "    msg = json.loads(line)\n"
                                     "    if msg['type'] == 'run':\n"
                                     "        time.sleep(len(msg['cases']) / 256)\n"
                                     "    sys.stdout.write(line)\n"
                                     "    sys.stdout.flush()\n");
  const std::string sut = "'exec:python3 " + slow + " | python3 " + kCorpus +
                          "/../tests/engine/misbehaving_adapter.py --mode behave'";
  const auto start = std::chrono::steady_clock::now();
  const Result r = R3check("verify --progress --json --cases 1536 --corpus " + corpus.path() +
                           " --sut " + sut);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_NE(r.status, 2) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.err);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("verify: ", 0) == 0) lines.push_back(line);
  }
  ASSERT_FALSE(lines.empty()) << r.err;
  const std::regex progress(
      R"(verify: (\d+)/1536 generated cases, (\d+) cases/s, (\d+) s left, (\d+) failing so far)");
  std::vector<int> done;
  double last = 0;  // seconds into the generated cases, as done / rate
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, progress)) << lines[i];
    const int d = std::stoi(m[1]);
    const double rate = std::stod(m[2]);
    done.push_back(d);
    EXPECT_EQ(d % 256, 0) << lines[i];  // after a whole batch
    EXPECT_LT(d, 1536) << lines[i];
    EXPECT_NEAR(std::stod(m[3]), (1536 - d) / rate, 1.0) << lines[i];  // the rest at this rate
    const double at = d / rate;
    EXPECT_GE(at - last, 1.95) << r.err;  // at least 2 s after the start or the last line
    last = at;
  }
  if (seconds < 9) {  // batches of 1 to 1.5 s: a line after every second batch
    EXPECT_EQ(done, (std::vector<int>{512, 1024})) << r.err;
  }
  EXPECT_TRUE(std::regex_match(
      lines.back(),
      std::regex(R"(verify: 1536 generated cases in \d+\.\d s, \d+ cases/s, \d+ failing)")))
      << lines.back();
}

TEST(CliFlagsE2eTest, VerifyTakesPolicySutAndMutant) {
  Result r = R3check("verify --cases 0 --policy legacy");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(Has(r.out, "r3check verify: sut vllm-post-50874, policy legacy")) << r.out;
  EXPECT_TRUE(Has(r.out, "tp2-dp2-warmup.r3case: FAIL")) << r.out;
  r = R3check("verify --cases 50 --policy tight");
  EXPECT_EQ(r.status, 0) << r.out;
  r = R3check("verify --cases 0 --sut vllm-pre-50874");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(Has(r.out, "tp2-dp2-eager.r3case: FAIL")) << r.out;
  r = R3check("verify --cases 0 --mutant capturer-rows-per-shard");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(Has(r.out, "capturer-rows-per-shard.r3case: FAIL")) << r.out;
  for (const char* flag : {"--policy nope", "--sut nope", "--mutant nope", "--frobnicate"}) {
    r = R3check(std::string("verify --cases 0 ") + flag);
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_EQ(r.out, "") << flag;
  }
}

// --- mutants, engines, the command line itself --------------------------------

TEST(CliFlagsE2eTest, MutantsListsTheWholeCatalogue) {
  const Result r = R3check("mutants");
  EXPECT_EQ(r.status, 0);
  for (const char* name : {"capturer-rows-per-shard", "sp-tp-gather-no-trim", "snapshot-int8",
                           "sp-gather-dp-group", "gpu-layer-stride", "gpu-gather-reversed",
                           "vllm-post-50874", "vllm-pre-50874", "legacy", "pr50874", "tight"}) {
    EXPECT_TRUE(Has(r.out, name)) << name;
  }
  EXPECT_TRUE(Has(r.out, "[gpu only]"));
  EXPECT_TRUE(Has(r.out, "  sp-gather-dp-group       with SP the dispatch all-gathers over the DP "
                         "group instead of the whole EP group [dispatch plan]\n"))
      << r.out;
  // Each list under its heading, in this order.
  const size_t mutants = r.out.find("mutants (--mutant NAME):\n");
  const size_t suts = r.out.find("\nsystems under test (--sut NAME):\n");
  const size_t policies = r.out.find("\nsizing policies (--policy NAME):\n");
  EXPECT_EQ(mutants, 0u) << r.out;
  EXPECT_TRUE(suts != std::string::npos && suts > mutants) << r.out;
  EXPECT_TRUE(policies != std::string::npos && policies > suts) << r.out;
  EXPECT_EQ(R3check("mutants extra").status, 2);
  EXPECT_EQ(R3check("mutants --jsn").status, 2);
}

// What scripts read (fuzz/expect_kill_each.py): every mutant with its flags.
TEST(CliFlagsE2eTest, MutantsJsonListsEachMutantWithItsKind) {
  const Result r = R3check("mutants --json");
  ASSERT_EQ(r.status, 0) << r.err;
  // Indented by two, one mutant's fields in the catalogue's order.
  EXPECT_EQ(r.out.rfind("[\n  {\n    \"name\": \"size-by-dp-with-ep\",\n    \"description\": ", 0),
            0u)
      << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  std::map<std::string, nlohmann::json> by_name;
  for (const nlohmann::json& m : j) by_name[m.at("name").get<std::string>()] = m;
  EXPECT_EQ(by_name.size(), j.size());
  ASSERT_EQ(by_name.count("floor-shard-size"), 1u);
  EXPECT_EQ(by_name["floor-shard-size"].dump(),
            R"({"description":"local_sizes and SP shards use floor division N // sp instead of )"
            R"(cdiv","dispatch":true,"equivalent":false,"gpu_only":false,"host_capture":false,)"
            R"("name":"floor-shard-size"})");
  EXPECT_EQ(by_name["shards-before-naive-dp"].at("equivalent"), true);
  EXPECT_EQ(by_name["shards-before-naive-dp"].at("dispatch"), false);
  EXPECT_EQ(by_name["no-sp-trim"].at("host_capture"), true);
  EXPECT_EQ(by_name["gpu-tail-rows"].at("gpu_only"), true);
  // As many as the text lists (17 today).
  const std::string text = R3check("mutants").out;
  const size_t from = text.find(":\n") + 2;
  const size_t to = text.find("systems under test");
  ASSERT_LT(from, to) << text;
  EXPECT_EQ(static_cast<size_t>(std::count(text.begin() + from, text.begin() + to, '\n')),
            j.size());
  EXPECT_GE(j.size(), 17u);
}

TEST(CliFlagsE2eTest, EnginesNamesTheAdaptersFolderAndEachAdapter) {
  const Result r = R3check("engines", "", "R3_ENGINES_DIR='" + kCorpus + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.rfind("engine adapters (docs/engines.md; adapters in " + kCorpus + ")\n  vllm\n"
                        "    --sut vllm:PATH ",
                        0),
            0u)
      << r.out;
  EXPECT_TRUE(Has(r.out, "\n  exec\n    --sut exec:CMD ")) << r.out;
  EXPECT_TRUE(Has(r.out, "\n  vllm-ascend\n    --sut vllm-ascend:PATH ")) << r.out;
  EXPECT_TRUE(Has(r.out, "\nengine flags: --engine-python, --engine-launch none|torchrun, --nproc N, "
                         "--engine-launch-arg ARG, --engine-device cpu|cuda, "
                         "--engine-timeout SECONDS, --engine-sizing FILE (vllm), "
                         "--engine-base PATH (vllm-ascend)\n"))
      << r.out;
}

TEST(CliFlagsE2eTest, CommandLineItself) {
  EXPECT_EQ(R3check("").status, 2);
  EXPECT_EQ(R3check("--help").status, 0);
  EXPECT_EQ(R3check("check --help").status, 0);
}

// --- minimize -----------------------------------------------------------------

TEST(CliFlagsE2eTest, MinimizeInvariantFlag) {
  Result r = R3check("minimize --mutant sp-gather-dp-group --invariant 5 "
                     "seeds/tp2-dp2-eager.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# r3check minimize: invariant 5 tp-agree fails", 0), 0u) << r.out;
  // An invariant the case does not fail: nothing to minimize.
  r = R3check("minimize --mutant sp-gather-dp-group --invariant 6 seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "does not fail invariant 6 dtype")) << r.out;
  for (const char* bad : {"0x", "8", "-1", "seven"}) {
    r = R3check(std::string("minimize --mutant no-sp-trim --invariant ") + bad +
                " seeds/tp2-dp2-eager.r3case");
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(r.out, "") << bad;
  }
}

TEST(CliFlagsE2eTest, MinimizeBudgetFlag) {
  // A 1 ms budget still ends in a case that fails the same way.
  Result r = R3check("minimize --mutant no-sp-trim --budget-ms 1 seeds/tp4-dp3-idle-rank.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string path = WriteTemp("budget-min.r3case", r.out);
  EXPECT_EQ(R3check("check --mutant no-sp-trim " + path).status, 1);
  EXPECT_EQ(R3check("check " + path).status, 0);
  // A budget that suffices: the same case as the default budget, not cut short.
  const Result full = R3check("minimize --mutant no-sp-trim seeds/tp4-dp3-idle-rank.r3case");
  r = R3check("minimize --mutant no-sp-trim --budget-ms 60000 seeds/tp4-dp3-idle-rank.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, full.out);
  EXPECT_FALSE(Has(r.out, "budget exhausted")) << r.out;
  for (const char* bad : {"0", "-5", "soon"}) {
    r = R3check(std::string("minimize --mutant no-sp-trim --budget-ms ") + bad +
                " seeds/tp2-dp2-eager.r3case");
    EXPECT_EQ(r.status, 2) << bad;
  }
}

TEST(CliFlagsE2eTest, MinimizeTakesPolicySutAndStandardInput) {
  Result r = R3check("minimize --policy legacy seeds/tp2-dp2-warmup.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "invariant 1 replay-fits fails")) << r.out;
  EXPECT_TRUE(Has(r.out, "# under sut vllm-post-50874, policy legacy.")) << r.out;
  r = R3check("minimize --sut vllm-pre-50874 seeds/tp2-dp2-eager.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "# under sut vllm-pre-50874, policy pr50874.")) << r.out;
  r = R3check("minimize --mutant no-sp-trim -",
              r3::testing::Slurp(kCorpus + "/seeds/tp2-dp2-eager.r3case"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(R3check("minimize").status, 2);
  EXPECT_EQ(R3check("minimize seeds/tp2-dp2-eager.r3case seeds/tp2-dp2-ep-off.r3case").status, 2);
  EXPECT_EQ(R3check("minimize --policy nope seeds/tp2-dp2-eager.r3case").status, 2);
  EXPECT_EQ(R3check("minimize --sut nope seeds/tp2-dp2-eager.r3case").status, 2);
}

TEST(CliFlagsE2eTest, MinimizeInvariantRangeIsOneToSeven) {
  for (const char* invariant : {"1", "7"}) {
    const Result r = R3check(std::string("minimize --mutant no-sp-trim --invariant ") + invariant +
                             " seeds/tp2-dp2-eager.r3case");
    EXPECT_EQ(r.status, 1) << invariant << r.err;
    EXPECT_EQ(r.err, "") << invariant;
    EXPECT_TRUE(Has(r.out, std::string("does not fail invariant ") + invariant + " ")) << r.out;
  }
}

TEST(CliFlagsE2eTest, MinimizeNothingToMinimizeNamesTheSettings) {
  const Result r = R3check("minimize seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "nothing to minimize: seeds/tp2-dp2-eager.r3case does not fail (sut "
                   "vllm-post-50874, policy pr50874)\n");
}

TEST(CliFlagsE2eTest, MinimizeSaveNameRulesAndRepeats) {
  ScratchCorpus corpus("save-rules-corpus", {});
  const std::string env = "R3CHECK_CORPUS='" + corpus.path() + "'";
  const std::string run = "minimize --mutant no-sp-trim seeds/tp2-dp2-eager.r3case --save ";
  // A name of 100 characters is taken, 101 is too long.
  Result r = R3check(run + std::string(100, 'n'), "", env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(corpus.path() + "/regressions/" + std::string(100, 'n') +
                                      ".r3case"));
  for (const std::string& bad : {std::string(101, 'n'), std::string(".hidden")}) {
    r = R3check(run + bad, "", env);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(r.err, "r3check: --save: name '" + bad +
                         "' must be letters, digits, '-', '_', '.', '+'\n");
  }
  // The same case under the same name again is no conflict.
  r = R3check(run + "twice", "", env);
  ASSERT_EQ(r.status, 0) << r.err;
  r = R3check(run + "twice", "", env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "saved " + corpus.path() + "/regressions/twice.r3case\n");
  // --save takes at most one name: a second word is a stray argument.
  r = R3check(run + "one two", "", env);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: The following argument was not expected: two\n");
  EXPECT_FALSE(std::filesystem::exists(corpus.path() + "/regressions/one.r3case"));
  // A corpus that is a file: the write fails, exit 2, nothing claims it saved.
  const std::string file = WriteTemp("save-corpus-file", "not a folder\n");
  r = R3check(run + "x", "", "R3CHECK_CORPUS='" + file + "'");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --save: cannot write " + file + "/regressions/x.r3case\n");
}

// --save goes into $R3CHECK_CORPUS/regressions, and what it saved is a
// regression that verify then runs first: it fails under the mutant only.
// A case file that cannot even be looked at (a symlink to itself) is bad
// input naming the file, exit 2: it used to escape as a filesystem_error,
// "internal error", exit 3.
TEST(CliFlagsE2eTest, AnUnreadableCaseFileInACorpusIsExitTwoNamingIt) {
  ScratchCorpus corpus("symlink-loop-corpus", {{"regressions/ok.r3case",
                                                "regressions/no-sp-trim.r3case"}});
  const std::string loop = corpus.path() + "/seeds/loop.r3case";
  std::filesystem::create_directories(corpus.path() + "/seeds");
  std::filesystem::create_symlink("loop.r3case", loop);
  Result r = R3check("verify --cases 0 --corpus " + corpus.path());
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "r3check: corpus: cannot read " + loop + ": Too many levels of symbolic links\n");
  // Only .r3case entries are looked at: a loop under another name is no case.
  std::filesystem::rename(loop, corpus.path() + "/seeds/loop.txt");
  r = R3check("verify --cases 0 --corpus " + corpus.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  // minimize --save onto such a file says so too.
  std::filesystem::create_symlink("x.r3case", corpus.path() + "/regressions/x.r3case");
  r = R3check("minimize --mutant no-sp-trim --save x seeds/tp2-dp2-eager.r3case", "",
              "R3CHECK_CORPUS='" + corpus.path() + "'");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "r3check: --save: cannot read " + corpus.path() +
                       "/regressions/x.r3case: Too many levels of symbolic links\n");
}

// A corpus needs only one of its folders; a missing one lists nothing.
TEST(CliFlagsE2eTest, ACorpusWithOnlySeedsRunsThem) {
  ScratchCorpus corpus("seeds-only-corpus", {{"seeds/a.r3case", "seeds/tp2-dp2-eager.r3case"}});
  std::filesystem::remove_all(corpus.path() + "/regressions");
  std::filesystem::remove_all(corpus.path() + "/findings");
  const Result r = R3check("verify --cases 0 --corpus " + corpus.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(Has(r.out, "seeds               1        1")) << r.out;
  EXPECT_TRUE(Has(r.out, "findings            0        0")) << r.out;
}

// A corpus folder that r3check may not list is bad input naming the folder,
// not an empty folder. Root lists any folder, so as root the run drops to
// nobody (setpriv, util-linux).
TEST(CliFlagsE2eTest, ACorpusFolderThatCannotBeListedIsExitTwoNamingIt) {
  const std::string setpriv = "setpriv --reuid=65534 --regid=65534 --clear-groups";
  if (geteuid() == 0 && r3::testing::RunShell(setpriv + " true").status != 0) {
    GTEST_SKIP() << "running as root without setpriv: cannot make a folder unreadable";
  }
  // A coverage build's binary writes .gcda files next to its objects, which
  // nobody may not: it would add its complaints to stderr. They go to a
  // folder nobody may write instead.
  const std::string gcov = TempPath("nobody-gcov");
  std::filesystem::create_directories(gcov);
  std::filesystem::permissions(gcov, std::filesystem::perms::all);
  const std::string as_nobody = "GCOV_PREFIX='" + gcov + "' " + setpriv;
  // A build tree closed to others (a home folder) keeps nobody from the binary.
  if (geteuid() == 0 && R3check("--version", "", as_nobody).status != 0) {
    GTEST_SKIP() << "running as root, and nobody may not run R3CHECK_BIN here";
  }
  ScratchCorpus corpus("unlistable-corpus", {{"seeds/a.r3case", "seeds/tp2-dp2-eager.r3case"}});
  const std::string seeds = corpus.path() + "/seeds";
  std::filesystem::permissions(seeds, std::filesystem::perms::none);
  const Result r = R3check("verify --cases 0 --corpus " + corpus.path(), "",
                           geteuid() == 0 ? as_nobody : "");
  std::filesystem::permissions(seeds, std::filesystem::perms::owner_all);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "r3check: corpus: cannot list " + seeds + ": Permission denied\n");
}

TEST(CliFlagsE2eTest, MinimizeSaveIntoATempCorpusThatVerifyRuns) {
  ScratchCorpus corpus("save-corpus", {});
  const std::string env = "R3CHECK_CORPUS='" + corpus.path() + "'";
  Result r = R3check("minimize --mutant capturer-rows-per-shard --save "
                     "seeds/tp2-dp2-warmup.r3case", "", env);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string saved =
      corpus.path() + "/regressions/capturer-rows-per-shard-pr50874-inv2-3-4.r3case";
  EXPECT_TRUE(Has(r.err, "saved " + saved)) << r.err;
  EXPECT_EQ(r3::testing::Slurp(saved), r.out);
  r = R3check("minimize --mutant capturer-rows-per-shard --save mine seeds/tp2-dp2-warmup.r3case",
              "", env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(corpus.path() + "/regressions/mine.r3case"));
  r = R3check("verify --cases 0", "", env);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(Has(r.out, "regressions         2        2")) << r.out;
  r = R3check("verify --cases 0 --mutant capturer-rows-per-shard", "", env);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_TRUE(Has(r.out, "regressions         2        0        0        2")) << r.out;
  // A name that is not a file name, or that exists with other content.
  EXPECT_EQ(R3check("minimize --mutant no-sp-trim --save a/b seeds/tp2-dp2-eager.r3case", "", env)
                .status,
            2);
  r = R3check("minimize --mutant no-sp-trim --save mine seeds/tp2-dp2-eager.r3case", "", env);
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(Has(r.err, "exists with other content")) << r.err;
  // Every character class a name may hold, at the edges of each range.
  r = R3check("minimize --mutant no-sp-trim --save aAzZ09-_.+ seeds/tp2-dp2-eager.r3case", "",
              env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(corpus.path() + "/regressions/aAzZ09-_.+.r3case"));
  for (const char* bad : {"'a b'", "'a`b'", "a@b", "'a[b'", "'a{b'", "a/b", ".hidden"}) {
    EXPECT_EQ(R3check(std::string("minimize --mutant no-sp-trim --save ") + bad +
                          " seeds/tp2-dp2-eager.r3case", "", env)
                  .status,
              2)
        << bad;
  }
}

}  // namespace
