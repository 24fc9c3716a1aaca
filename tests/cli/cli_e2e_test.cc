// End-to-end: runs the r3check binary as a subprocess and asserts on its
// output and exit status, as a user or a CI script sees them.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "r3check_config.h"
#include "tests/testing/r3check_runner.h"
#include "tests/testing/run_shell.h"

namespace {

using Result = r3::testing::R3checkResult;
using r3::testing::Slurp;
using r3::testing::TempPath;

// Runs `r3check ARGS` (ARGS is shell text) with the corpus as working directory.
Result R3check(const std::string& args, const std::string& stdin_text = "") {
  return r3::testing::RunR3check(R3CHECK_SOURCE_CORPUS, args, stdin_text);
}

int Lines(const std::string& text) { return r3::testing::CountLines(text); }

TEST(CliE2eTest, CheckPassesEverySeed) {
  const Result r = R3check("check seeds/*.r3case");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("passed, 0 failed"), std::string::npos) << r.out;
}

TEST(CliE2eTest, CheckFlagsTheEagerStepBeforeTheFixOnly) {
  const Result pre = R3check("check --sut vllm-pre-50874 seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(pre.status, 1);
  EXPECT_NE(pre.out.find("FAIL"), std::string::npos);
  EXPECT_NE(pre.out.find("dp1/tp1 (branch error, n=10) raised AssertionError"), std::string::npos)
      << pre.out;
  const Result post = R3check("check seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(post.status, 0);
  EXPECT_NE(post.out.find("PASS"), std::string::npos);
}

TEST(CliE2eTest, CheckReportsAMutantsWrongRows) {
  const Result r = R3check("check --mutant shard-start-without-S seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("dp1/tp0 (branch ep-sp-shards, n=10) captured dp0[3..5) pad1, "
                       "expected dp1[0..3)"),
            std::string::npos)
      << r.out;
}

TEST(CliE2eTest, MutantFlagTakesOneValueWhereverItStands) {
  const Result r = R3check("check --mutant no-sp-trim seeds/tp2-dp2-eager.r3case "
                           "--mutant snapshot-int8 seeds/tp2-dp2-ep-off.r3case");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("seeds/tp2-dp2-ep-off.r3case: FAIL, 1 violation(s) (sut vllm-post-50874, "
                       "policy pr50874, mutant no-sp-trim, mutant snapshot-int8)"),
            std::string::npos)
      << r.out;
}

TEST(CliE2eTest, CheckReadsStandardInput) {
  const Result r = R3check("check -", Slurp(std::string(R3CHECK_SOURCE_CORPUS) +
                                            "/seeds/tp2-dp2-graph-decode.r3case"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("<stdin>: PASS"), std::string::npos) << r.out;
}

TEST(CliE2eTest, StandardInputIsBoundedLikeAFile) {
  // Past the 1 MiB limit the read stops with the file error, instead of
  // reading until memory runs out.
  Result r = R3check("check -", std::string((1 << 20) + 1, '#'));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "<stdin>:1: r3case: input is larger than 1 MiB\n");
  EXPECT_EQ(r.out, "");
  // An endless stream (a mistyped `< /dev/zero`) ends the same way, well
  // inside a 512 MiB address-space limit (reading it all would hit the limit).
  const std::string err = TempPath("stdin_zero_err");
  const r3::testing::ShellResult shell = r3::testing::RunShell(
      "ulimit -v 524288; " + std::string(std::getenv("R3CHECK_BIN")) + " check - </dev/zero 2>" +
      err);
  EXPECT_EQ(shell.status, 2);
  EXPECT_EQ(Slurp(err), "<stdin>:1: r3case: input is larger than 1 MiB\n");
}

TEST(CliE2eTest, AWordThatIsNoCommandGetsTheUsage) {
  for (const char* args : {"frobnicate", "chek seeds/tp2-dp2-eager.r3case", ""}) {
    const Result r = R3check(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    const std::string word = std::string(args).substr(0, std::string(args).find(' '));
    if (!word.empty()) {
      EXPECT_EQ(r.err.rfind("r3check: unknown command '" + word + "'\n", 0), 0u) << r.err;
    }
    EXPECT_NE(r.err.find("Usage: r3check [OPTIONS] SUBCOMMAND"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("minimize"), std::string::npos) << r.err;  // the commands are listed
  }
}

TEST(CliE2eTest, ShortHelpFlagIsHelpNotAnUnknownCommand) {
  // A first word that starts with '-' goes to the parser, however short.
  const Result r = R3check("-h");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("Usage: r3check [OPTIONS] SUBCOMMAND"), std::string::npos) << r.out;
}

TEST(CliE2eTest, AnEngineThatMisbehavesIsExitTwoWithOneLine) {
  // exec:true exits before the hello: an engine error, not a verdict.
  const Result r = R3check("check --sut exec:true seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: engine exec:true: exited before answering hello (exited with status 0)\n");
  EXPECT_EQ(r.out, "");
}

TEST(CliE2eTest, AVerdictThatCannotBeWrittenIsExitTwo) {
  // A short verdict stays in stdout's buffer until the end: only the final
  // flush finds the full disk, and it must not pass for a clean run.
  for (const char* args : {"check seeds/tp2-dp2-eager.r3case", "sizing seeds/tp2-dp2-eager.r3case",
                           "mutants"}) {
    const Result r = R3check(std::string(args) + " >/dev/full");
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err, "r3check: cannot write to standard output\n") << args;
  }
}

// The documents are printed with an indent of 2, as the approved files are.
void ExpectIndentedByTwo(const Result& r, const std::string& args) {
  ASSERT_FALSE(r.out.empty()) << args << r.err;
  EXPECT_EQ(r.out, nlohmann::ordered_json::parse(r.out).dump(2) + "\n") << args;
  EXPECT_EQ(r.out.rfind("{\n  \"", 0), 0u) << args << r.out;
}

TEST(CliE2eTest, EveryJsonDocumentIsIndentedByTwo) {
  for (const char* args : {"check --json seeds/tp2-dp2-eager.r3case",
                           "sizing --json seeds/tp2-dp2-eager.r3case",
                           "verify --json --cases 3", "verify --json --replay 1:3"}) {
    ExpectIndentedByTwo(R3check(args), args);
  }
}

TEST(CliE2eTest, CheckOfOneCasePrintsOnlyItsVerdict) {
  // The "N passed, M failed" line is for two or more cases.
  const Result r = R3check("check seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "seeds/tp2-dp2-eager.r3case: PASS (sut vllm-post-50874, policy pr50874)\n");
  const Result two = R3check("check seeds/tp2-dp2-eager.r3case seeds/tp2-dp2-ep-off.r3case");
  EXPECT_EQ(two.status, 0);
  EXPECT_EQ(two.out.substr(two.out.rfind('\n', two.out.size() - 2) + 1), "2 passed, 0 failed\n");
}

TEST(CliE2eTest, CheckJsonReportIsTheFailureTextOnly) {
  const std::string args = "--mutant no-sp-trim seeds/tp2-dp2-eager.r3case";
  const Result text = R3check("check " + args);
  ASSERT_EQ(text.status, 1);
  const Result r = R3check("check --json " + args + " seeds/tp2-dp2-ep-off.r3case");
  ASSERT_EQ(r.status, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cases"][0]["report"], text.out);
  EXPECT_EQ(j["cases"][1]["verdict"], "pass");
  EXPECT_FALSE(j["cases"][1].contains("report")) << j["cases"][1].dump();
}

TEST(CliE2eTest, GpuSettingsWithoutGpuAreExitTwo) {
  // They would otherwise check on the host while the user believes the GPU ran.
  for (const char* args : {"check --gpu-graph seeds/tp2-dp2-eager.r3case",
                           "check --gpu-ranks emulated seeds/tp2-dp2-eager.r3case",
                           "verify --gpu-ranks auto --cases 1", "verify --gpu-graph --cases 1"}) {
    const Result r = R3check(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(Lines(r.err), 1) << args << r.err;
    EXPECT_NE(r.err.find("requires --gpu"), std::string::npos) << args << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST(CliE2eTest, KnownFindingsAloneAreAPassInTextAndJson) {
  const Result text = R3check("explain findings/internal-sp-decode-pad.r3case");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("verdict: PASS with 5 known-finding violation(s)"), std::string::npos)
      << text.out;
  // ranks the finding explains carry its name, not WRONG, under a PASS
  EXPECT_EQ(text.out.find("WRONG"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("expected dp0[0..1)  known finding internal-sp-decode-pad"),
            std::string::npos)
      << text.out;

  const Result json = R3check("explain --json findings/internal-sp-decode-pad.r3case");
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["verdict"], "pass-known");
  int known = 0;
  for (const nlohmann::json& rank : j["ranks"]) {
    if (rank["ok"] == false) {
      EXPECT_EQ(rank["label"], "known finding internal-sp-decode-pad") << rank.dump();
      ++known;
    } else {
      EXPECT_EQ(rank["label"], "ok") << rank.dump();
    }
  }
  EXPECT_GT(known, 0);
}

TEST(CliE2eTest, AnUnexplainedWrongRankIsWrongAndNotOk) {
  // The same finding's layout under a seeded bug: the known finding does not
  // cover what the bug breaks, so the verdict fails and the rank says WRONG.
  const Result r =
      R3check("explain --json --mutant shard-start-without-S seeds/tp2-dp2-eager.r3case");
  ASSERT_EQ(r.status, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["ranks"][2]["label"], "WRONG") << j["ranks"][2].dump();
  const Result pass = R3check("explain --json seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(nlohmann::json::parse(pass.out)["verdict"], "pass");
}

TEST(CliE2eTest, HelpHasExamplesAndEveryDefault) {
  Result r = R3check("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Examples:\n  r3check verify"), std::string::npos) << r.out;
  r = R3check("verify --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("=10000"), std::string::npos) << r.out;  // --cases
  EXPECT_NE(r.out.find("--policy TEXT=pr50874"), std::string::npos) << r.out;
  r = R3check("minimize --help");
  EXPECT_NE(r.out.find("=10000"), std::string::npos) << r.out;  // --budget-ms
}

TEST(CliE2eTest, VersionNamesTheProgram) {
  const Result r = R3check("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("r3check ", 0), 0u) << r.out;
  EXPECT_EQ(Lines(r.out), 1);
}

TEST(CliE2eTest, CheckJsonListsEveryCaseWithItsSettings) {
  const Result r = R3check("check --json --mutant no-sp-trim seeds/tp2-dp2-eager.r3case "
                           "seeds/tp2-dp2-ep-off.r3case");
  ASSERT_EQ(r.status, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);  // only JSON on stdout
  EXPECT_EQ(j["command"], "check");
  EXPECT_EQ(j["options"]["mutants"], nlohmann::json({"no-sp-trim"}));
  ASSERT_EQ(j["cases"].size(), 2u);
  const nlohmann::json& eager = j["cases"][0];
  EXPECT_EQ(eager["source"], "seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(eager["verdict"], "fail");
  EXPECT_EQ(eager["ok"], false);
  EXPECT_EQ(eager["case"]["dp"], 2);
  EXPECT_EQ(eager["case"]["ep"], true);
  EXPECT_EQ(eager["case"]["dispatch"], "naive");
  EXPECT_EQ(eager["case"]["tokens"], nlohmann::json({5, 3}));
  EXPECT_EQ(eager["case_text"].get<std::string>().rfind("r3case 1\n", 0), 0u);
  EXPECT_FALSE(eager["violations"].empty());
  EXPECT_EQ(j["cases"][1]["verdict"], "pass");
  EXPECT_EQ(j["passed"], 1);
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["ok"], false);
}

TEST(CliE2eTest, CheckJunitIsLockedByAnApprovalFile) {
  // The JUnit layout CI services parse (R3_UPDATE_APPROVALS=1 rewrites it).
  const std::string xml = TempPath("check.xml");
  const Result r = R3check("check --mutant no-sp-trim --junit " + xml +
                           " seeds/tp2-dp2-eager.r3case seeds/tp2-dp2-ep-off.r3case");
  ASSERT_EQ(r.status, 1) << r.err;
  const std::string approved = std::string(R3CHECK_TESTDATA) + "/approved/check_two_seeds.junit.xml";
  const char* update = std::getenv("R3_UPDATE_APPROVALS");
  if (update != nullptr && std::string(update) == "1") std::ofstream(approved) << Slurp(xml);
  EXPECT_EQ(Slurp(xml), Slurp(approved)) << "JUnit format changed: " << approved;
}

TEST(CliE2eTest, VerifyJunitHasOneFailingTestcasePerFailingCase) {
  // What a CI job reads: under a seeded bug every failing case (and only
  // those) is a <failure> with the verdict and the case text.
  const std::string xml = TempPath("verify.xml");
  const Result r = R3check("verify --mutant no-sp-trim --cases 300 --json --junit " + xml);
  ASSERT_EQ(r.status, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "verify");
  EXPECT_EQ(j["corpus"], std::string(R3CHECK_SOURCE_CORPUS));
  EXPECT_EQ(j["seed"], 1);
  EXPECT_EQ(j["generated_cases"], 300);
  EXPECT_EQ(j["options"]["policy"], "pr50874");
  const int failing = j["total"]["fail"].get<int>();
  ASSERT_GT(failing, 0);
  EXPECT_EQ(static_cast<int>(j["failures"].size()), failing);
  const std::string junit = Slurp(xml);
  int testcases = 0, failures = 0;
  for (size_t at = junit.find("<testcase "); at != std::string::npos;
       at = junit.find("<testcase ", at + 1)) {
    ++testcases;
  }
  for (size_t at = junit.find("<failure "); at != std::string::npos;
       at = junit.find("<failure ", at + 1)) {
    ++failures;
  }
  EXPECT_EQ(testcases, j["total"]["cases"].get<int>());
  EXPECT_EQ(failures, failing);
  EXPECT_NE(junit.find("tests=\"" + std::to_string(testcases) + "\" failures=\"" +
                       std::to_string(failing) + "\""),
            std::string::npos);
  EXPECT_NE(junit.find("--- case ---\nr3case 1\n"), std::string::npos);
  EXPECT_NE(junit.find("name=\"generated case "), std::string::npos);
}

TEST(CliE2eTest, VerifyJunitCountsFailuresPerSource) {
  // Each source's testsuite counts its own failures: the regressions and
  // seeds that the bug breaks, not those of another source.
  const std::string xml = TempPath("verify-groups.xml");
  const Result r = R3check("verify --mutant no-sp-trim --cases 40 --json --junit " + xml);
  ASSERT_EQ(r.status, 1) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const std::string junit = Slurp(xml);
  for (const char* source : {"regressions", "seeds", "findings", "generated"}) {
    const nlohmann::json& t = j["sources"][source];
    EXPECT_NE(junit.find("<testsuite name=\"r3check-verify." + std::string(source) + "\" tests=\"" +
                         std::to_string(t["cases"].get<int>()) + "\" failures=\"" +
                         std::to_string(t["fail"].get<int>()) + "\">"),
              std::string::npos)
        << source << "\n" << junit;
  }
  EXPECT_GT(j["sources"]["regressions"]["fail"].get<int>(), 0);
  EXPECT_LT(j["sources"]["regressions"]["fail"].get<int>(),
            j["sources"]["regressions"]["cases"].get<int>());
}

TEST(CliE2eTest, VerifyJunitAloneListsEveryCase) {
  // Without --json the records are still kept for --junit.
  const std::string xml = TempPath("verify-junit-only.xml");
  const Result r = R3check("verify --cases 5 --junit " + xml);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string junit = Slurp(xml);
  int testcases = 0;
  for (size_t at = junit.find("<testcase "); at != std::string::npos;
       at = junit.find("<testcase ", at + 1)) {
    ++testcases;
  }
  EXPECT_GT(testcases, 5);  // the corpus files and the 5 generated cases
  EXPECT_NE(junit.find("<testsuites name=\"r3check-verify\" tests=\"" + std::to_string(testcases) +
                       "\" failures=\"0\">"),
            std::string::npos)
      << junit;
  EXPECT_NE(junit.find("name=\"generated case 4 (seed 1)\"/>"), std::string::npos) << junit;
}

TEST(CliE2eTest, VerifySavesAndReplaysAFailingGeneratedCase) {
  const std::string dir = TempPath("saved-failures");
  Result r = R3check("verify --mutant no-sp-trim --cases 200 --save-failures " + dir);
  ASSERT_EQ(r.status, 1) << r.err;
  // the first failing generated case, as the text names it
  const size_t at = r.out.find("generated case ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string index = r.out.substr(at + 15, r.out.find(' ', at + 15) - at - 15);
  const std::string saved = dir + "/generated-seed1-case" + index + ".r3case";
  const std::string text = Slurp(saved);
  EXPECT_NE(text.find("again: r3check verify --replay 1:" + index), std::string::npos) << text;
  // the saved file is a case that fails the same way, and --replay finds it
  r = R3check("check --mutant no-sp-trim " + saved);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  r = R3check("verify --mutant no-sp-trim --replay 1:" + index);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.rfind("generated case " + index + " (seed 1): FAIL", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(text.substr(text.find("r3case 1"))), std::string::npos)
      << "--replay prints the same case the file holds";
  r = R3check("verify --replay 1:" + index);  // without the bug it passes
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(CliE2eTest, VerifyProgressOnlyWhenAskedOutsideATerminal) {
  Result r = R3check("verify --cases 50");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");  // stderr is a file here: quiet
  r = R3check("verify --cases 50 --progress");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("verify: 50 generated cases in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" cases/s, 0 failing"), std::string::npos) << r.err;
}

TEST(CliE2eTest, VerifyProgressFinalLineOnlyWhenThereAreCases) {
  Result r = R3check("verify --cases 0 --progress");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  r = R3check("verify --cases 1 --progress");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err.rfind("verify: 1 generated cases in ", 0), 0u) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
}

TEST(CliE2eTest, VerifyProgressOnATerminalWithoutTheFlag) {
  // script(1) gives r3check a terminal for stdout and stderr.
  if (r3::testing::RunShell("command -v script >/dev/null").status != 0) {
    GTEST_SKIP() << "no script(1) here";
  }
  const r3::testing::ShellResult r = r3::testing::RunShell(
      "cd " + std::string(R3CHECK_SOURCE_CORPUS) + " && script -qec '" +
      std::getenv("R3CHECK_BIN") + " verify --cases 3' /dev/null </dev/null");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("verify: 3 generated cases in "), std::string::npos) << r.out;
}

TEST(CliE2eTest, AFolderThatIsNoCorpusIsExitTwo) {
  const Result r = R3check("verify --cases 0 --corpus " + std::string(R3CHECK_TESTDATA));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--corpus: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is not a corpus"), std::string::npos) << r.err;
}

TEST(CliE2eTest, EnginesWithAMissingAdaptersFolderIsExitTwo) {
  const Result r = r3::testing::RunR3check(R3CHECK_SOURCE_CORPUS, "engines", "",
                                           "R3_ENGINES_DIR=/no/such/dir");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: R3_ENGINES_DIR: no such folder: /no/such/dir\n");
}

TEST(CliE2eTest, BadCaseFileIsOneLineAndExitTwo) {
  const std::string path = TempPath("bad.r3case");
  std::ofstream(path) << "r3case 1\ndp 2\ntp 0\n";
  const Result r = R3check("check " + path);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, path + ":3: tp: value 0 is out of range [1, 64]\n");
  EXPECT_EQ(r.out, "");
}

TEST(CliE2eTest, UnknownFlagValuesAreExitTwo) {
  Result r = R3check("check --mutant nope seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(Lines(r.err), 1);
  EXPECT_NE(r.err.find("--mutant: unknown mutant 'nope'"), std::string::npos) << r.err;
  r = R3check("explain --policy huge seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--policy"), std::string::npos);
  r = R3check("frobnicate");
  EXPECT_EQ(r.status, 2);
}

TEST(CliE2eTest, ExplainJsonHasTheDocumentedShape) {
  const Result r = R3check("explain --json seeds/tp2-dp2-eager.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  // the same bytes as the approved explain JSON (tests/testdata/approved)
  EXPECT_EQ(r.out, Slurp(std::string(R3CHECK_TESTDATA) + "/approved/explain_eager.json"));
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["sp"], true);
  EXPECT_EQ(j["dispatch"], "naive");
  EXPECT_EQ(j["N"], nlohmann::json({5, 3}));
  EXPECT_EQ(j["local_sizes"], nlohmann::json({3, 3, 2, 2}));
  EXPECT_EQ(j["replay"]["policy"], "pr50874");
  EXPECT_EQ(j["replay"]["buffer_rows"], 32768);
  EXPECT_EQ(j["replay"]["kernel_rows"], 10);
  EXPECT_EQ(j["replay"]["fits"], true);
  ASSERT_EQ(j["ranks"].size(), 4u);
  const nlohmann::json& dp1 = j["ranks"][2];
  EXPECT_EQ(dp1["dp"], 1);
  EXPECT_EQ(dp1["tp"], 0);
  EXPECT_EQ(dp1["n"], 10);
  EXPECT_EQ(dp1["branch"], "ep-sp-shards");
  EXPECT_TRUE(dp1["error"].is_null());
  EXPECT_EQ(dp1["captured"], nlohmann::json::parse(R"([{"dp":1,"from":0,"count":3}])"));
  EXPECT_EQ(dp1["expected"], dp1["captured"]);
  EXPECT_EQ(dp1["ok"], true);
}

TEST(CliE2eTest, ExplainJsonOfASingleRankHasNullLocalSizes) {
  const Result r = R3check("explain --json seeds/dp1-tp1-graph.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["local_sizes"].is_null());
  EXPECT_EQ(j["ranks"][0]["branch"], "no-dp");
}

TEST(CliE2eTest, ExplainTextDrawsTheGatheredStrip) {
  const Result r = R3check("explain seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("|00000|.|111|.|"), std::string::npos) << r.out;
}

TEST(CliE2eTest, SizingJsonShowsLegacyUnsafeAndTheFixSafe) {
  const Result r = R3check("sizing --json seeds/tp2-dp2-warmup.r3case");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["required_rows"], 16384);
  EXPECT_EQ(j["policies"]["legacy"]["rows"], 8192);
  EXPECT_EQ(j["policies"]["legacy"]["safe"], false);
  EXPECT_DOUBLE_EQ(j["policies"]["legacy"]["slack"].get<double>(), 0.5);
  EXPECT_EQ(j["policies"]["pr50874"]["rows"], 32768);
  EXPECT_EQ(j["policies"]["pr50874"]["safe"], true);
  EXPECT_DOUBLE_EQ(j["policies"]["pr50874"]["slack"].get<double>(), 2.0);
  EXPECT_EQ(j["policies"]["tight"]["slack"], 1.0);
}

TEST(CliE2eTest, CheckWithLegacyPolicyFlagsTheWarmup) {
  const Result r = R3check("check --policy legacy seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("[1 replay-fits] dp0/tp0: kernel input of 16384 rows does not fit the "
                       "replay buffer of 8192 rows"),
            std::string::npos)
      << r.out;
}

TEST(CliE2eTest, VerifyIsDeterministicAndGreen) {
  const Result a = R3check("verify --cases 300 --seed 11");
  const Result b = R3check("verify --cases 300 --seed 11");
  EXPECT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("verify: OK"), std::string::npos);
  EXPECT_NE(a.out.find("generated         300"), std::string::npos) << a.out;
}

TEST(CliE2eTest, VerifyFailsUnderAMutant) {
  const Result r = R3check("verify --cases 100 --mutant no-sp-trim");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("verify: FAILED"), std::string::npos);
  EXPECT_NE(r.out.find("--- case ---\nr3case 1\n"), std::string::npos);
}

TEST(CliE2eTest, MutantsListsTheCatalogue) {
  const Result r = R3check("mutants");
  EXPECT_EQ(r.status, 0);
  for (const char* name : {"size-by-dp-with-ep", "shard-start-without-S", "no-sp-trim",
                           "tp-major-ep-order", "floor-shard-size", "naive-dp-end-off-by-one",
                           "local-sizes-len-eq-dp", "shards-before-naive-dp"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
  EXPECT_NE(r.out.find("[equivalent]"), std::string::npos);
}

}  // namespace
