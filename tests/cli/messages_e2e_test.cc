// End-to-end (issue 22, the rest): a failing verify prints its summary
// first and at most --max-failures failures in full; bad inputs get a
// message naming the real cause; whole-number flags are decimal only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "r3check_config.h"
#include "tests/testing/r3check_runner.h"

namespace {

using Result = r3::testing::R3checkResult;
using r3::testing::Slurp;
using r3::testing::TempPath;

const std::string kCorpus = R3CHECK_SOURCE_CORPUS;
const std::string kEager = kCorpus + "/seeds/tp2-dp2-eager.r3case";

Result R3check(const std::string& args, const std::string& env = "") {
  return r3::testing::RunR3check(kCorpus, args, "", env);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int Count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The "total" row's fail column.
long TotalFails(const std::string& out) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex("\ntotal +[0-9]+ +[0-9]+ +[0-9]+ +([0-9]+)\n")))
      << out;
  return m.empty() ? -1 : std::stol(m[1]);
}

class Scratch {
 public:
  explicit Scratch(const std::string& name) : dir_(TempPath(name)) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
    return Path(name);
  }

 private:
  std::filesystem::path dir_;
};

// --- verify: the summary first, then at most N failures -----------------------

const std::string kFailing = "verify --cases 300 --seed 3 --mutant no-sp-trim";

TEST(MessagesE2eTest, VerifyPrintsTheSummaryFirstAndAtMostTwentyFailures) {
  const Result r = R3check(kFailing);
  EXPECT_EQ(r.status, 1) << r.err;
  const long fails = TotalFails(r.out);
  ASSERT_GT(fails, 20) << r.out;
  EXPECT_EQ(Count(r.out, "--- case ---\n"), 20) << r.out;
  // The verdict comes before the first failure.
  EXPECT_LT(r.out.find("verify: FAILED\n"), r.out.find(".r3case: FAIL")) << r.out;
  EXPECT_LT(r.out.find("verify: FAILED\n"), r.out.find("--- case ---\n")) << r.out;
  EXPECT_TRUE(Has(r.out, "\n... and " + std::to_string(fails - 20) +
                             " more failures: --save-failures DIR keeps every one\n"))
      << r.out;
}

TEST(MessagesE2eTest, VerifyMaxFailuresBoundsWhatIsPrintedNotWhatIsSaved) {
  const Scratch s("max-failures");
  Result r = R3check(kFailing + " --max-failures 0 --save-failures " + s.Path("saved"));
  EXPECT_EQ(r.status, 1) << r.err;
  const long fails = TotalFails(r.out);
  EXPECT_EQ(Count(r.out, "--- case ---\n"), 0) << r.out;
  EXPECT_FALSE(Has(r.out, "r3case: FAIL")) << r.out;
  EXPECT_FALSE(Has(r.out, "): FAIL")) << r.out;
  EXPECT_TRUE(Has(r.out, "... and " + std::to_string(fails) + " more failures (each generated one is in " + s.Path("saved") + ")\n")) << r.out;
  // --save-failures still saves all (the corpus's failures are files already).
  long saved = 0;
  for (const auto& e : std::filesystem::directory_iterator(s.Path("saved"))) saved += e.is_regular_file();
  const Result all = R3check(kFailing + " --max-failures 100000");
  EXPECT_EQ(Count(all.out, "(seed 3): FAIL"), saved) << all.out;
  EXPECT_EQ(Count(all.out, "--- case ---\n"), fails) << all.out;
  EXPECT_FALSE(Has(all.out, "more failure")) << all.out;
  r = R3check(kFailing + " --max-failures 2");
  EXPECT_EQ(Count(r.out, "--- case ---\n"), 2) << r.out;
  EXPECT_TRUE(Has(r.out, "... and " + std::to_string(fails - 2) + " more failures:")) << r.out;
}

TEST(MessagesE2eTest, VerifyJsonListsEveryFailureUnlessMaxFailuresIsGiven) {
  const long fails = TotalFails(R3check(kFailing).out);
  Result r = R3check(kFailing + " --json");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(Count(r.out, "\"verdict\": \"fail\""), fails);
  EXPECT_FALSE(Has(r.out, "failures_not_listed"));
  r = R3check(kFailing + " --json --max-failures 3");
  EXPECT_EQ(Count(r.out, "\"verdict\": \"fail\""), 3);
  EXPECT_TRUE(Has(r.out, "\"failures_not_listed\": " + std::to_string(fails - 3))) << r.out;
}

TEST(MessagesE2eTest, VerifyMaxFailuresOutOfRangeIsAUsageError) {
  for (const char* bad : {"-1", "many", "0x10"}) {
    const Result r = R3check(std::string("verify --cases 1 --max-failures ") + bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_EQ(r3::testing::CountLines(r.err), 1) << r.err;
    EXPECT_TRUE(Has(r.err, "r3check: --max-failures: ")) << r.err;
  }
}

// --- messages that name the real cause ---------------------------------------

TEST(MessagesE2eTest, CheckOfAFolderSaysItIsOne) {
  const Result r = R3check("check seeds");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "r3check: seeds is a directory; give case files (seeds/*.r3case), or use verify "
            "--corpus DIR\n");
}

TEST(MessagesE2eTest, AByteOrderMarkIsAccepted) {
  const Scratch s("bom");
  const std::string bom = s.Write("bom.r3case", "\xEF\xBB\xBF" + Slurp(kEager));
  const Result plain = R3check("check " + kEager);
  const Result r = R3check("check " + bom);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(Has(r.out, bom + ": PASS")) << r.out;
  EXPECT_EQ(plain.status, 0);
  // Only at the very start: elsewhere it is an unknown key, as before.
  const std::string inside = s.Write("mid.r3case", "r3case 1\n\xEF\xBB\xBF" "dp 2\n");
  EXPECT_EQ(R3check("check " + inside).status, 2);
}

TEST(MessagesE2eTest, OldMacLineEndingsAreNamed) {
  const Scratch s("cr");
  std::string text = Slurp(kEager);
  for (char& ch : text) ch = ch == '\n' ? '\r' : ch;
  const Result r = R3check("check " + s.Write("cr.r3case", text));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r3::testing::CountLines(r.err), 1) << r.err;
  EXPECT_TRUE(Has(r.err, ":1: r3case: old-Mac line endings (CR without LF)")) << r.err;
  // CRLF (Windows) still reads.
  text = Slurp(kEager);
  std::string crlf;
  for (char ch : text) crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  EXPECT_EQ(R3check("check " + s.Write("crlf.r3case", crlf)).status, 0);
}

TEST(MessagesE2eTest, AFileThatCannotBeOpenedSaysWhy) {
  const Scratch s("open");
  std::filesystem::create_symlink(s.Path("loop2.r3case"), s.Path("loop1.r3case"));
  std::filesystem::create_symlink(s.Path("loop1.r3case"), s.Path("loop2.r3case"));
  Result r = R3check("check " + s.Path("loop1.r3case"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, s.Path("loop1.r3case") +
                       ":0: r3case: cannot open file (Too many levels of symbolic links)\n");
  r = R3check("check no/such.r3case");
  EXPECT_EQ(r.err, "no/such.r3case:0: r3case: cannot open file (No such file or directory)\n");
  if (geteuid() != 0) {  // root reads it anyway
    const std::string locked = s.Write("locked.r3case", Slurp(kEager));
    std::filesystem::permissions(locked, std::filesystem::perms::none);
    r = R3check("check " + locked);
    EXPECT_EQ(r.err, locked + ":0: r3case: cannot open file (Permission denied)\n");
  }
}

TEST(MessagesE2eTest, ATildeInSutVllmIsTheHomeFolder) {
  const Scratch s("home");
  Result r = R3check("check --sut vllm:~/no-such-vllm " + kEager, "HOME=" + s.Path(""));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --sut vllm:PATH: no such file or directory: " + s.Path("") +
                       "/no-such-vllm\n");
  // An existing checkout under ~ is found: the error is no longer "no such".
  std::filesystem::create_directories(s.Path("vllm"));
  r = R3check("check --sut vllm:~/vllm --engine-timeout 5 " + kEager, "HOME=" + s.Path(""));
  EXPECT_FALSE(Has(r.err, "no such file or directory")) << r.err;
}

// --- whole numbers are decimal ------------------------------------------------

TEST(MessagesE2eTest, WholeNumberFlagsAreDecimalOnly) {
  const std::string eager = " " + kEager;
  for (const std::string& args :
       {"minimize --mutant no-sp-trim --budget-ms 0x10" + eager,
        "minimize --mutant no-sp-trim --budget-ms 0b11" + eager,
        "minimize --mutant no-sp-trim --invariant 0x1" + eager,
        std::string("verify --cases 0x10"), std::string("verify --cases 0o7"),
        std::string("verify --cases 1 --max-failures 0x10")}) {
    const Result r = R3check(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.out;
    EXPECT_EQ(r3::testing::CountLines(r.err), 1) << r.err;
    EXPECT_TRUE(Has(r.err, "must be a whole number in decimal, not '0")) << args << ": " << r.err;
  }
  // Leading zeros read in decimal (CLI11 alone reads 010 as octal 8).
  EXPECT_TRUE(Has(R3check("verify --cases 010").out, ", 10 generated cases")) << R3check("verify --cases 010").out;
  EXPECT_EQ(R3check("minimize --mutant no-sp-trim --budget-ms 016" + eager).status, 0);
}

}  // namespace
