// End-to-end: the files r3check writes on request (--junit, --svg,
// --save-failures) can be trusted (issue 22). No command writes over a path
// it reads; bad output paths are usage errors before anything runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "r3check_config.h"
#include "tests/testing/r3check_runner.h"
#include "tests/testing/run_shell.h"

namespace {

using Result = r3::testing::R3checkResult;
using r3::testing::Slurp;
using r3::testing::TempPath;

const std::string kCorpus = R3CHECK_SOURCE_CORPUS;

Result R3check(const std::string& args, const std::string& stdin_text = "",
               const std::string& env = "") {
  return r3::testing::RunR3check(kCorpus, args, stdin_text, env);
}

int Lines(const std::string& text) { return r3::testing::CountLines(text); }

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A fresh scratch folder with copies of seeds, removed at the end.
class Scratch {
 public:
  explicit Scratch(const std::string& name) : dir_(TempPath(name)) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  // Copies seeds/SEED to NAME in the folder; returns its path.
  std::string Seed(const std::string& seed, const std::string& name) const {
    const std::string to = Path(name);
    std::filesystem::copy_file(kCorpus + "/seeds/" + seed, to);
    return to;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

const std::string kEager = "tp2-dp2-eager.r3case";
const std::string kWarmup = "tp2-dp2-warmup.r3case";

// --- no command writes to a path it reads -----------------------------------

TEST(OutputsE2eTest, CheckJunitWithTheFileNameForgottenLeavesTheFirstCaseAlone) {
  // `check --junit DIR/*.r3case`: the shell hands the first case to --junit.
  const Scratch s("junit-glob");
  const std::string first = s.Seed(kEager, "a.r3case");
  s.Seed(kWarmup, "b.r3case");
  const std::string before = Slurp(first);
  const Result r = R3check("check --junit " + s.Path("*.r3case"));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_EQ(r.err.rfind("r3check: --junit: " + first + " ", 0), 0u) << r.err;
  EXPECT_EQ(Slurp(first), before);
}

TEST(OutputsE2eTest, ExplainSvgOverItsOwnCaseIsRefused) {
  const Scratch s("svg-same");
  const std::string c = s.Seed(kEager, "eager.case");  // not named .r3case
  const std::string before = Slurp(c);
  const Result r = R3check("explain --svg " + c + " " + c);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--svg: " + c)) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Slurp(c), before);
}

TEST(OutputsE2eTest, SizingSvgOverItsOwnCaseIsRefused) {
  const Scratch s("sizing-same");
  const std::string c = s.Seed(kEager, "x.r3case");
  const std::string before = Slurp(c);
  const Result r = R3check("sizing --svg " + c + " " + c);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--svg: " + c)) << r.err;
  EXPECT_EQ(Slurp(c), before);
}

TEST(OutputsE2eTest, AnOutputThatIsTheSameFileAsAnInputIsRefused) {
  // Standard input is a pipe; /dev/stdin names that same pipe.
  const std::string err = TempPath("same-pipe.err");
  const r3::testing::ShellResult r = r3::testing::RunShell(
      "cat " + kCorpus + "/seeds/" + kEager + " | " + std::getenv("R3CHECK_BIN") +
      " check --junit /dev/stdin - 2>" + err);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(Slurp(err), "r3check: --junit: /dev/stdin is also an input of this run (<stdin>); "
                        "not writing it\n");
}

TEST(OutputsE2eTest, VerifyWritesNoOutputIntoItsCorpus) {
  const Scratch s("verify-corpus");
  std::filesystem::create_directories(s.Path("corpus/seeds"));
  const std::string seed = s.Seed(kEager, "corpus/seeds/eager.r3case");
  const std::string before = Slurp(seed);
  Result r = R3check("verify --cases 0 --corpus " + s.Path("corpus") + " --junit " + seed);
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "--junit: " + seed)) << r.err;
  EXPECT_EQ(Slurp(seed), before);
  // A failing case saved into the corpus would be run as a seed next time.
  r = R3check("verify --cases 50 --mutant no-sp-trim --corpus " + s.Path("corpus") +
              " --save-failures " + s.Path("corpus/seeds"));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.err, "r3check: --save-failures: " + s.Path("corpus/seeds") +
                       " is a folder this run reads (" + s.Path("corpus/seeds") +
                       "); not writing into it\n");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(s.Path("corpus/seeds"))) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

// --- outputs that are written whole, checked first, and never stale -------

TEST(OutputsE2eTest, EmptyOutputPathsAreUsageErrors) {
  const std::string c = "seeds/" + kEager;
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"check --junit '' " + c, "--junit: the path is empty (name a file)"},
      {"explain --svg '' " + c, "--svg: the path is empty (name a file)"},
      {"sizing --svg '' " + c, "--svg: the path is empty (name a file)"},
      {"verify --cases 1 --save-failures ''", "--save-failures: the path is empty (name a folder)"},
      {"verify --cases 1 --corpus ''", "--corpus: the path is empty (name a folder)"},
  };
  for (const auto& [args, message] : runs) {
    const Result r = R3check(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err, "r3check: " + message + "\n") << args;
  }
}

TEST(OutputsE2eTest, VerifyChecksItsJunitPathBeforeRunning) {
  const Result r = R3check("verify --cases 2000 --junit /no/such/dir/out.xml");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "") << "nothing ran, so nothing may say OK";
  EXPECT_EQ(r.err, "r3check: --junit: cannot write /no/such/dir/out.xml (No such file or directory)\n");
  const Result d = R3check("check --junit " + kCorpus + " seeds/" + kEager);
  EXPECT_EQ(d.status, 2);
  EXPECT_EQ(d.out, "");
  EXPECT_EQ(d.err, "r3check: --junit: " + kCorpus + " is a folder, not a file\n");
}

TEST(OutputsE2eTest, ARunThatEndsInErrorReplacesAnEarlierGreenJunit) {
  const Scratch s("stale-junit");
  const std::string xml = s.Path("r3.xml");
  ASSERT_EQ(R3check("check --junit " + xml + " seeds/" + kEager).status, 0);
  ASSERT_TRUE(Has(Slurp(xml), "failures=\"0\""));
  std::ofstream(s.Path("bad.r3case")) << "r3case 1\ndp 0\n";
  const Result r = R3check("check --junit " + xml + " seeds/" + kEager + " " + s.Path("bad.r3case"));
  EXPECT_EQ(r.status, 2);
  const std::string report = Slurp(xml);
  EXPECT_TRUE(Has(report, "errors=\"1\"")) << report;
  EXPECT_TRUE(Has(report, "<error message=\"" + s.Path("bad.r3case") + ":2: dp: value 0 is out of range")) << report;
  EXPECT_FALSE(Has(report, "tp2-dp2-eager")) << "the earlier run's testcase is gone: " << report;
}

TEST(OutputsE2eTest, AnUnparseableCommandLineReplacesAnEarlierGreenJunit) {
  // --cases fails its check before --junit's ran: the green report of the
  // earlier run used to stay in place.
  const Scratch s("unparsed-junit");
  const std::string xml = s.Path("r3.xml");
  const std::string svg = s.Path("r3.svg");
  ASSERT_EQ(R3check("verify --cases 5 --junit " + xml).status, 0);
  ASSERT_EQ(R3check("explain --svg " + svg + " seeds/" + kEager).status, 0);
  for (const std::string args : {"verify --cases 0x10 --junit " + xml, "verify --cases five --junit=" + xml,
                                 "verify --junit " + xml + " --no-such-flag"}) {
    const Result r = R3check(args);
    EXPECT_EQ(r.status, 2) << args;
    const std::string report = Slurp(xml);
    // Only the error testcase: the earlier run's testcases are gone.
    EXPECT_TRUE(Has(report, "<testsuites name=\"r3check\" tests=\"1\" failures=\"0\" errors=\"1\">")) << args << report;
    ASSERT_EQ(R3check("verify --cases 5 --junit " + xml).status, 0);
  }
  EXPECT_EQ(R3check("explain --no-such-flag --svg " + svg + " seeds/" + kEager).status, 2);
  EXPECT_FALSE(std::filesystem::exists(svg)) << "a picture of the earlier run would stay";
  // A case file named after --junit is still never written.
  const std::string seed = s.Path("seed.r3case");
  std::filesystem::copy_file(kCorpus + "/seeds/" + kEager, seed);
  const std::string before = Slurp(seed);
  EXPECT_EQ(R3check("check --cases 3 --junit " + seed + " seeds/" + kEager).status, 2);
  EXPECT_EQ(Slurp(seed), before);
}

TEST(OutputsE2eTest, AnOutputNobodyMayWriteIsRefusedBeforeTheRun) {
  // sysfs refuses new files even to root (CI runs as root, where a chmod
  // 000 folder would not stop anything), so this denies on every machine.
  ASSERT_TRUE(std::filesystem::is_directory("/sys")) << "a Linux machine has sysfs";
  const Result j = R3check("verify --cases 3000 --junit /sys/r3check.xml");
  EXPECT_EQ(j.status, 2);
  EXPECT_EQ(j.out, "") << "nothing ran, so nothing may say OK";
  EXPECT_EQ(j.err, "r3check: --junit: cannot write /sys/r3check.xml (Permission denied)\n");
  const Result v = R3check("explain --svg /sys/r3check.svg seeds/" + kEager);
  EXPECT_EQ(v.status, 2);
  EXPECT_EQ(v.err, "r3check: --svg: cannot write /sys/r3check.svg (Permission denied)\n");
  const Result f = R3check("verify --cases 3000 --mutant no-sp-trim --save-failures /sys/r3check-saved");
  EXPECT_EQ(f.status, 2);
  EXPECT_EQ(f.out, "");
  EXPECT_EQ(f.err, "r3check: --save-failures: cannot create the folder /sys/r3check-saved (Operation not permitted)\n");
}

TEST(OutputsE2eTest, ARunThatEndsInErrorRemovesAnEarlierSvg) {
  const Scratch s("stale-svg");
  const std::string svg = s.Path("eager.svg");
  ASSERT_EQ(R3check("explain --svg " + svg + " seeds/" + kEager).status, 0);
  ASSERT_TRUE(std::filesystem::exists(svg));
  std::ofstream(s.Path("bad.r3case")) << "r3case 1\ndp 0\n";
  const Result r = R3check("explain --svg " + svg + " " + s.Path("bad.r3case"));
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(std::filesystem::exists(svg)) << "a picture of the earlier case would stay";
}

TEST(OutputsE2eTest, AWriteThatFailsMidFileLeavesNoPartOfIt) {
  // ulimit -f: the report is larger than the file-size limit (EFBIG), like a
  // full disk; the old file is replaced by a whole error report, no temp left.
  const Scratch s("file-limit");
  const std::string xml = s.Path("r3.xml");
  const Result r = R3check("verify --cases 300 --mutant no-sp-trim --junit " + xml, "",
                           "ulimit -f 2;");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err, "r3check: --junit: cannot write " + xml + " (File too large)\n");
  const std::string report = Slurp(xml);
  EXPECT_TRUE(Has(report, "<error message=\"r3check: --junit: cannot write")) << report;
  EXPECT_EQ(report.substr(report.size() - 14), "</testsuites>\n") << report;
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(s.Path(""))) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "no temporary file beside it";
}

// --- flags that would change nothing are usage errors ----------------------

TEST(OutputsE2eTest, AGpuOnlyMutantOffTheGpuPathIsAUsageError) {
  // The host SUT ignores it: the run would say PASS for what it never ran.
  for (const std::string args : {"check --mutant gpu-tail-rows seeds/" + kEager,
                                 std::string("verify --cases 1 --mutant gpu-layer-stride"),
                                 "explain --mutant gpu-vec-groups seeds/" + kEager,
                                 "minimize --mutant gpu-gather-reversed seeds/" + kEager}) {
    const Result r = R3check(args);
    EXPECT_EQ(r.status, 2) << args << r.out;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(Lines(r.err), 1) << args << r.err;
    EXPECT_TRUE(Has(r.err, ": lives in the GPU capture path")) << args << r.err;
  }
}

TEST(OutputsE2eTest, ANotANumberEngineTimeoutIsAUsageError) {
  // strtod reads all of these (0x1p3 is 8 s, inf past any range check but
  // NaN's); only plain decimal seconds are taken.
  for (const std::string value : {"nan", "0x1p3", "inf", "1e", ".", "+5", "5s"}) {
    const Result r = R3check("check --sut exec:true --engine-timeout " + value + " seeds/" + kEager);
    EXPECT_EQ(r.status, 2) << value;
    EXPECT_EQ(r.err, "r3check: --engine-timeout: must be a decimal number of seconds in [0.001, 86400], not '" +
                         value + "'\n");
  }
  for (const std::string value : {"2", "0.5", "1e1", "86400", ".5"}) {  // accepted (exec:true answers nothing: exit 2 later)
    const Result r = R3check("check --sut exec:true --engine-timeout " + value + " seeds/" + kEager);
    EXPECT_FALSE(Has(r.err, "--engine-timeout")) << value << r.err;
  }
}

TEST(OutputsE2eTest, AMinimizeBudgetPastADayIsAUsageError) {
  // 9.2e12 ms used to overflow the deadline: "budget exhausted" in 0 steps, exit 0.
  for (const std::string budget : {"9200000000000", "86400001"}) {
    const Result r = R3check("minimize --mutant no-sp-trim --budget-ms " + budget + " seeds/" + kEager);
    EXPECT_EQ(r.status, 2) << budget << r.out;
    EXPECT_EQ(r.err, "r3check: --budget-ms: must be at most 86400000 (a day)\n") << budget;
  }
}

// --- every replay hint reproduces the exact run -----------------------------

TEST(OutputsE2eTest, TheSavedReplayHintCarriesEveryFlagThatShapesTheVerdict) {
  const Scratch s("replay-hint");
  const Result r = R3check("verify --cases 200 --mutant no-sp-trim --policy legacy --save-failures " +
                           s.Path("saved"));
  ASSERT_EQ(r.status, 1) << r.err;
  std::string saved;
  for (const auto& e : std::filesystem::directory_iterator(s.Path("saved"))) saved = e.path().string();
  ASSERT_FALSE(saved.empty());
  const std::string text = Slurp(saved);
  const size_t at = text.find("again: r3check ");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string hint = text.substr(at + 15, text.find('\n', at) - at - 15);
  EXPECT_TRUE(Has(hint, "--mutant no-sp-trim --policy legacy")) << hint;
  const Result again = R3check(hint);  // as a user would paste it
  EXPECT_EQ(again.status, 1) << hint << again.out;
  EXPECT_TRUE(Has(again.out, ": FAIL")) << again.out;
}

}  // namespace
