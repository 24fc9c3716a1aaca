// End-to-end: r3check with engine SUTs whose adapter misbehaves, and bad
// engine flags. Every failure of the adapter is one line on stderr and exit
// status 2, never a verdict.
#include <gtest/gtest.h>

#include <string>

#include "tests/testing/r3check_runner.h"

namespace {

using Result = r3::testing::R3checkResult;

Result R3check(const std::string& args) {
  return r3::testing::RunR3check(R3CHECK_SOURCE_CORPUS, args);
}

std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string Misbehaving(const std::string& mode) {
  return "'exec:python3 " + std::string(R3CHECK_TESTS) + "/engine/misbehaving_adapter.py --mode " +
         mode + "'";
}

struct Case {
  std::string mode;
  std::string message;  // the end of r3check's one-line error
};

class MisbehavingAdapterTest : public ::testing::TestWithParam<Case> {};

TEST_P(MisbehavingAdapterTest, IsOneLineAndExitTwo) {
  const Result r = R3check("check --engine-timeout 2 --sut " + Misbehaving(GetParam().mode) +
                           " seeds/tp2-dp2-eager.r3case seeds/tp2-dp2-sp-off.r3case");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "") << "no verdict may be printed";
  const std::string line = LastLine(r.err);
  EXPECT_TRUE(line.starts_with("r3check: engine exec:python3 ")) << line;
  EXPECT_TRUE(line.ends_with(GetParam().message)) << line;
}

INSTANTIATE_TEST_SUITE_P(
    Modes, MisbehavingAdapterTest,
    ::testing::Values(
        Case{"crash-at-start", "exited before answering hello (exited with status 3)"},
        Case{"fatal-at-start", "cannot load the engine: test says no"},
        Case{"garbage-hello", "hello: not JSON: 'Traceback (most recent call last): nonsense'"},
        Case{"wrong-protocol", "speaks protocol 2, r3check speaks 1"},
        Case{"crash-on-run", "exited before answering run 1 (exited with status 1)"},
        Case{"hang-on-run", "no reply within 2000 ms (hung?)"},
        Case{"garbage-on-run", "reply to run 1: not JSON: '{not json'"},
        Case{"fatal-on-run", "engine module raised SystemError at import"},
        Case{"wrong-id", "reply to run 1: id: 2 is outside [1, 1]"},
        Case{"wrong-cases", "reply to run 1: cases: 1 entries, expected 2"},
        Case{"wrong-ranks", "reply to run 1: cases[0].ranks: 3 entries, expected 4"},
        Case{"bad-owner", "reply to run 1: cases[0].ranks[0].captured[0].dp: 2 is outside [0, 1]"},
        Case{"bad-type", "reply to run 1: cases[0].ranks[0].n: expected an integer"},
        Case{"wrong-n",
             "cases[0].ranks[0].n: the adapter handed capture 11 rows, the request had 10"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.mode;
      for (char& ch : name) ch = ch == '-' ? '_' : ch;
      return name;
    });

TEST(EngineFlagsTest, AMissingVllmPathIsOneLine) {
  const Result r = R3check("check --sut vllm:/nonexistent/vllm seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --sut vllm:PATH: no such file or directory: /nonexistent/vllm\n");
}

TEST(EngineFlagsTest, AnEmptyEngineIsOneLine) {
  Result r = R3check("check --sut vllm: seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--sut vllm:PATH: PATH is empty"), std::string::npos) << r.err;
  r = R3check("check --sut 'exec: ' seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --sut exec:CMD: the command is empty\n");
}

TEST(EngineFlagsTest, CaptureMutantsDoNotApplyToEngines) {
  const Result r = R3check("check --mutant no-sp-trim --sut " + Misbehaving("wrong-id") +
                           " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--mutant no-sp-trim: lives in the built-in SUT's capture code"),
            std::string::npos)
      << r.err;
}

TEST(EngineFlagsTest, EngineFlagsNeedAnEngine) {
  Result r = R3check("check --engine-device cuda seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--engine-*/--nproc: apply to an engine SUT"), std::string::npos) << r.err;
  r = R3check("verify --cases 1 --nproc 2 --sut " + Misbehaving("wrong-id"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --nproc: needs --engine-launch torchrun\n");
  r = R3check("check --engine-launch slurm --sut vllm:" + std::string(R3CHECK_TESTS) +
              " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --engine-launch: 'slurm' is not none | torchrun\n");
}

TEST(EngineFlagsTest, GpuFlagIsNotForEngines) {
  const Result r = R3check("check --gpu --sut " + Misbehaving("wrong-id") +
                           " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--gpu: runs the built-in SUT's capture on the GPU"), std::string::npos)
      << r.err;
}

TEST(EngineFlagsTest, EnginesListsTheAdapters) {
  const Result r = R3check("engines");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--sut vllm:PATH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--sut exec:CMD"), std::string::npos) << r.out;
}

}  // namespace
