// End-to-end: r3check with engine SUTs whose adapter misbehaves, and bad
// engine flags. Every failure of the adapter is one line on stderr and exit
// status 2, never a verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "r3check_config.h"
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

// gtest parameter names: "no-sp-trim" -> "no_sp_trim".
std::string Identifier(std::string name) {
  for (char& ch : name) ch = ch == '-' ? '_' : ch;
  return name;
}

std::string Misbehaving(const std::string& mode) {
  return "'exec:python3 " + std::string(R3CHECK_TESTS) + "/engine/misbehaving_adapter.py --mode " +
         mode + "'";
}

struct Case {
  std::string mode;
  std::string message;  // the end of r3check's one-line error
  bool in_run = false;  // during a run: the error then names the saved cases
};

// A folder of its own for $TMPDIR, where r3check saves the cases of a run
// the adapter failed on; removed with the object.
struct TmpDir {
  explicit TmpDir(const std::string& name) : path(r3::testing::TempPath(name)) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TmpDir() { std::filesystem::remove_all(path); }
  std::string Env() const { return "TMPDIR=" + path; }
  size_t Entries() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(path),
                                             std::filesystem::directory_iterator()));
  }
  std::string path;
};

// The line of stderr that starts with `prefix`, or "".
std::string LineStarting(const std::string& text, const std::string& prefix) {
  size_t at = text.starts_with(prefix) ? 0 : text.find("\n" + prefix);
  if (at == std::string::npos) return "";
  if (text[at] == '\n') ++at;
  return text.substr(at, text.find('\n', at) - at);
}

class MisbehavingAdapterTest : public ::testing::TestWithParam<Case> {};

TEST_P(MisbehavingAdapterTest, IsOneLineAndExitTwo) {
  const TmpDir tmp("misbehaving-" + Identifier(GetParam().mode));
  const Result r = r3::testing::RunR3check(
      R3CHECK_SOURCE_CORPUS,
      "check --engine-timeout 8 --sut " + Misbehaving(GetParam().mode) +
          " seeds/tp2-dp2-eager.r3case seeds/tp2-dp2-sp-off.r3case",
      "", tmp.Env());
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "") << "no verdict may be printed";
  const std::string line = LineStarting(r.err, "r3check: engine exec:python3 ");
  if (!GetParam().in_run) {
    EXPECT_EQ(line, LastLine(r.err));
    EXPECT_TRUE(line.ends_with(GetParam().message)) << r.err;
    EXPECT_EQ(tmp.Entries(), 0u) << "no run, no saved cases";
    return;
  }
  // During a run: the error names where the run's two cases are saved, and
  // the last line says how to replay and minimize them.
  const std::string saved = GetParam().message + "; the 2 cases of that run are saved in " +
                            tmp.path + "/r3check-engine-crash-";
  EXPECT_NE(line.find(saved), std::string::npos) << r.err;
  EXPECT_TRUE(line.ends_with("/ (001.r3case is the first)")) << line;
  EXPECT_TRUE(LastLine(r.err).starts_with("r3check: replay: r3check check --sut 'exec:python3 "))
      << r.err;
  EXPECT_EQ(r3::testing::CountLines(r.err), 3) << r.err;  // the hello line, the error, the hint
  EXPECT_EQ(tmp.Entries(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, MisbehavingAdapterTest,
    ::testing::Values(
        Case{"crash-at-start", "exited before answering hello (exited with status 3)"},
        Case{"fatal-at-start", "cannot load the engine: test says no"},
        Case{"garbage-hello", "hello: not JSON: 'Traceback (most recent call last): nonsense'"},
        Case{"wrong-protocol", "speaks protocol 2, r3check speaks 1"},
        Case{"crash-on-run", "exited before answering run 1 (exited with status 1)", true},
        Case{"hang-on-run",
             "no reply within 8000 ms (hung? engine code may be waiting on input: a "
             "breakpoint(), input() or read of stdin)",
             true},
        Case{"input-on-run",
             "no reply within 8000 ms (hung? engine code may be waiting on input: a "
             "breakpoint(), input() or read of stdin)",
             true},
        Case{"huge-line",
             "sent a line longer than the protocol's cap of 4194304 bytes (docs/engines.md)", true},
        Case{"endless-line",
             "sent a line longer than the protocol's cap of 4194304 bytes (docs/engines.md)", true},
        Case{"garbage-on-run", "reply to run 1: not JSON: '{not json'", true},
        Case{"fatal-on-run", "engine module raised SystemError at import", true},
        Case{"wrong-id", "reply to run 1: id: 2 is outside [1, 1]", true},
        Case{"wrong-cases", "reply to run 1: cases: 1 entries, expected 2", true},
        Case{"wrong-ranks", "reply to run 1: cases[0].ranks: 3 entries, expected 4", true},
        Case{"bad-owner", "reply to run 1: cases[0].ranks[0].captured[0].dp: 2 is outside [0, 1]",
             true},
        Case{"bad-type", "reply to run 1: cases[0].ranks[0].n: expected an integer", true},
        Case{"wrong-n",
             "cases[0].ranks[0].n: the adapter handed capture 11 rows, the request had 10", true},
        Case{"sizing-undeclared",
             "cases[0].ranks[0].replay_rows: reported, but the hello named no sizing code "
             "(\"sizing\": null)",
             true}),
    [](const ::testing::TestParamInfo<Case>& info) { return Identifier(info.param.mode); });

// The hint after a failed run is a command that runs the saved case again
// the same way (flags included), and so is its minimize command.
TEST(EngineCrashTest, TheSavedCaseAndTheHintReplayTheRun) {
  const TmpDir tmp("crash-replay");
  const Result r = r3::testing::RunR3check(
      R3CHECK_SOURCE_CORPUS,
      "check --policy legacy --engine-timeout 30 --sut " + Misbehaving("crash-on-run") +
          " seeds/tp2-dp2-eager.r3case",
      "", tmp.Env());
  ASSERT_EQ(r.status, 2) << r.err;
  const std::string line = LineStarting(r.err, "r3check: engine exec:python3 ");
  const std::string saved = "; the case it was running is saved in ";
  const size_t at = line.find(saved);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string file = line.substr(at + saved.size());
  EXPECT_TRUE(file.starts_with(tmp.path + "/r3check-engine-crash-")) << file;
  EXPECT_TRUE(file.ends_with(".r3case")) << file;
  EXPECT_NE(r3::testing::Slurp(file).find("tokens 5 3\n"), std::string::npos);
  // The built-in SUT passes it: a readable case file.
  EXPECT_EQ(R3check("check " + file).status, 0);
  const std::string hint = LastLine(r.err);
  const std::string replay = "r3check: replay: r3check ";
  const std::string minimize = "; minimize: r3check ";
  ASSERT_TRUE(hint.starts_with(replay)) << hint;
  const size_t split = hint.find(minimize);
  ASSERT_NE(split, std::string::npos) << hint;
  const std::string again = hint.substr(replay.size(), split - replay.size());
  EXPECT_EQ(again, "check --sut " + Misbehaving("crash-on-run") +
                       " --engine-timeout 30 --policy legacy " + file);
  for (const std::string& args : {again, hint.substr(split + minimize.size())}) {
    const Result rerun = r3::testing::RunR3check("/", args, "", tmp.Env());
    EXPECT_EQ(rerun.status, 2) << args << "\n" << rerun.err;
    EXPECT_NE(rerun.err.find("exited before answering run 1 (exited with status 1); the case it "
                             "was running is saved in "),
              std::string::npos)
        << args << "\n" << rerun.err;
  }
}

TEST(EngineCrashTest, AnEndlessLineStopsAtTheCapQuickly) {
  const TmpDir tmp("endless");
  const auto start = std::chrono::steady_clock::now();
  const Result r = r3::testing::RunR3check(
      R3CHECK_SOURCE_CORPUS, "check --sut " + Misbehaving("endless-line") +
                                 " seeds/tp2-dp2-eager.r3case", "", tmp.Env());
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("sent a line longer than the protocol's cap of 4194304 bytes"),
            std::string::npos) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

// Engines that load their own sizing code: invariant 1 judges the engine's
// buffer, not the built-in --policy. The fake adapter captures correctly, so
// the buffer alone decides.
TEST(EngineSizingTest, TheEnginesBufferOverridesThePolicy) {
  // The engine's 2^20 rows hold the warmup step, and they are what is judged.
  Result r = R3check("check --sut " + Misbehaving("sizing-fits") + " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("policy fake sizing: FusedMoEExpertsMonolithic"), std::string::npos) << r.out;
  std::string sha;
  for (int i = 0; i < 4; ++i) sha += "0123456789abcdef";
  EXPECT_NE(r.err.find("r3check: engine exec: fake sizing from /fake/modular_kernel.py (sha256 " +
                       sha + ", monolithic, FusedMoEExpertsMonolithic.set_capture_fn(fn))\n"),
            std::string::npos)
      << r.err;
  // A built-in policy would change nothing then: a usage error, not a PASS.
  r = R3check("check --policy legacy --sut " + Misbehaving("sizing-fits") +
              " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("r3check: --policy legacy: the engine loaded its own sizing code (fake "
                       "sizing: FusedMoEExpertsMonolithic (modular_kernel.py, sha256 "
                       "0123456789ab)), which invariant 1 judges; a built-in policy would change "
                       "nothing\n"),
            std::string::npos)
      << r.err;
  // So would a mutant of the built-in policy (it used to say PASS, "mutant
  // size-by-dp-with-ep").
  r = R3check("check --mutant size-by-dp-with-ep --sut " + Misbehaving("sizing-fits") +
              " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("r3check: --mutant size-by-dp-with-ep: lives in the built-in sizing policy; "
                       "the engine loaded its own sizing code (fake sizing: "
                       "FusedMoEExpertsMonolithic (modular_kernel.py, sha256 0123456789ab)), which "
                       "invariant 1 judges, so it would change nothing\n"),
            std::string::npos)
      << r.err;
  // An engine that loaded no sizing code keeps the built-in policy: legacy
  // fails, and the sizing mutant applies.
  r = R3check("check --policy legacy --sut " + Misbehaving("good") +
              " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("(policy legacy, exact bound 16384)"), std::string::npos) << r.out;
  r = R3check("check --mutant size-by-dp-with-ep --sut " + Misbehaving("good") +
              " seeds/tp2-dp2-warmup.r3case");
  EXPECT_NE(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("mutant size-by-dp-with-ep"), std::string::npos) << r.out;
}

TEST(EngineSizingTest, TheEnginesOwnValueErrorIsInvariantOne) {
  // The default policy (pr50874) would hold the warmup step; vLLM's own
  // pre-#50874 sizing does not, and its check raises.
  const Result r =
      R3check("check --sut " + Misbehaving("sizing-raises") + " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("dp0/tp0: kernel input of 16384 rows does not fit the replay buffer of "
                       "8192 rows (policy fake sizing: FusedMoEExpertsMonolithic "
                       "(modular_kernel.py, sha256 0123456789ab), exact bound 16384); "
                       "ValueError: Routing replay buffer was initialized for 8192 tokens on cpu, "
                       "but the kernel received 16384 tokens on cpu."),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("rows-exact"), std::string::npos) << r.out;
  // A step that fits passes.
  EXPECT_EQ(R3check("check --sut " + Misbehaving("sizing-raises") + " seeds/tp2-dp2-eager.r3case")
                .status,
            0);
}

TEST(EngineSizingTest, ASilentlyShortSinkSliceIsInvariantOne) {
  const Result r =
      R3check("check --sut " + Misbehaving("sink-short") + " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("(policy fake sizing: RoutedExpertsSink (routed_experts_capturer.py, sha256 "
                       "0123456789ab), exact bound 16384); the kernel got a slice of 8192 rows "
                       "for its 16384 input rows: the sink buffer is too small and nothing raised"),
            std::string::npos)
      << r.out;
}

TEST(EngineSizingTest, SizingPrintsTheEnginesRowsBesideThePolicies) {
  Result r = R3check("sizing --sut " + Misbehaving("sizing-raises") + " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const Result builtin = R3check("sizing seeds/tp2-dp2-warmup.r3case");
  EXPECT_TRUE(r.out.starts_with(builtin.out)) << r.out;
  EXPECT_EQ(r.out.substr(builtin.out.size()),
            "fake             8192  NO       0.500x          128 KiB            128 KiB\n"
            "\n"
            "fake: fake sizing: FusedMoEExpertsMonolithic (modular_kernel.py, sha256 "
            "0123456789ab), the rows it allocated per rank\n"
            "fake this step: raised ValueError: Routing replay buffer was initialized for 8192 "
            "tokens on cpu, but the kernel received 16384 tokens on cpu.\n");
  r = R3check("sizing --json --sut " + Misbehaving("sink-short") + " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\"engine\": {\n    \"name\": \"fake\",\n    \"label\": \"fake sizing: "
                       "RoutedExpertsSink (routed_experts_capturer.py, sha256 0123456789ab)\",\n"
                       "    \"rows\": 8192,"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"short_slices\": 4"), std::string::npos) << r.out;
}

TEST(EngineSizingTest, SizingNeedsAnEngineThatLoadedSizingCode) {
  Result r = R3check("sizing --sut " + Misbehaving("good") + " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(LastLine(r.err),
            "r3check: sizing --sut exec:python3 " + std::string(R3CHECK_TESTS) +
                "/engine/misbehaving_adapter.py --mode good: the engine loaded no sizing code (its "
                "hello has no \"sizing\"); give the file with --engine-sizing FILE "
                "(modular_kernel.py or the RoutedExpertsSink file), or a vLLM checkout as "
                "vllm:PATH");
  r = R3check("sizing --sut " + Misbehaving("sizing-missing") + " seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(LastLine(r.err).ends_with(": its sizing code reported no replay_rows for this case"))
      << r.err;
  r = R3check("sizing --sut vllm-pre-50874 seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --sut vllm-pre-50874: sizing reports the built-in policies whatever "
                   "the built-in SUT; --sut here takes an engine (vllm:PATH | exec:CMD)\n");
  r = R3check("sizing --policy tight seeds/tp2-dp2-warmup.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --policy: sizing reports every built-in policy; it takes none\n");
}

TEST(EngineFlagsTest, EngineSizingIsForVllmEnginesAndMustExist) {
  Result r = R3check("check --engine-sizing /nonexistent.py seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--engine-*/--nproc: apply to an engine SUT"), std::string::npos) << r.err;
  r = R3check("check --engine-sizing " + std::string(R3CHECK_TESTS) + "/engine/meson.build --sut " +
              Misbehaving("good") + " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --engine-sizing: applies to vllm:PATH; with exec:CMD give the file to "
                   "the adapter in CMD\n");
  r = R3check("check --engine-sizing /nonexistent.py --sut vllm:" + std::string(R3CHECK_TESTS) +
              " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --engine-sizing: no such file: /nonexistent.py\n");
  r = R3check("check --engine-sizing " + std::string(R3CHECK_TESTS) + " --sut vllm:" +
              std::string(R3CHECK_TESTS) + " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --engine-sizing: not a file: " + std::string(R3CHECK_TESTS) +
                       " (the .py that holds vLLM's sizing code)\n");
  r = R3check("check --engine-sizing '' --sut vllm:" + std::string(R3CHECK_TESTS) +
              " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--engine-sizing"), std::string::npos) << r.err;
}

TEST(EngineFlagsTest, EngineSizingIsPassedToTheAdapter) {
  const std::string argv_file = r3::testing::TempPath("engine-sizing-argv.txt");
  const std::string python = r3::testing::TempPath("engine-sizing-python.sh");
  std::filesystem::remove(argv_file);
  std::ofstream(python) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << argv_file << "'\nexit 3\n";
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  const std::string source = R3CHECK_TESTS;
  const Result r = R3check("check --sut vllm:" + source + " --engine-python " + python +
                           " --engine-sizing " + source + "/engine/meson.build"
                           " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  const std::string argv = r3::testing::Slurp(argv_file);
  EXPECT_TRUE(argv.ends_with("/vllm/r3_adapter.py\n--source\n" + source + "\n--device\ncpu\n--sizing\n" +
                             source + "/engine/meson.build\n"))
      << argv;
  std::filesystem::remove(argv_file);
  std::filesystem::remove(python);
}

TEST(EngineSummaryTest, TorchrunRunsSayHowManyCasesHadRealCollectives) {
  const Result r = R3check("check --sut " + Misbehaving("two-processes") +
                           " seeds/tp2-dp2-eager.r3case seeds/tp4-dp3-idle-rank.r3case");
  EXPECT_EQ(r.status, 1) << r.err;  // it captures nothing: a verdict, not an error
  EXPECT_NE(r.err.find("r3check: engine exec: 1 of 2 case(s) ran with real TP collectives over 2 "
                       "processes, the rest emulated\n"),
            std::string::npos)
      << r.err;
}

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
  for (const char* flag : {"--nproc 2", "--engine-device cuda", "--engine-launch torchrun",
                           "--engine-python /usr/bin/python3", "--engine-timeout 5",
                           "--engine-launch-arg=--nnodes=2"}) {
    const Result r = R3check(std::string("check ") + flag + " seeds/tp2-dp2-eager.r3case");
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_EQ(r.out, "") << flag;
    EXPECT_NE(r.err.find("--engine-*/--nproc: apply to an engine SUT"), std::string::npos)
        << flag << ": " << r.err;
  }
  EXPECT_EQ(R3check("check --nproc 0 seeds/tp2-dp2-eager.r3case").status, 2);
  Result r = R3check("verify --cases 1 --nproc 2 --sut " + Misbehaving("wrong-id"));
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --nproc: needs --engine-launch torchrun\n");
  r = R3check("check --engine-launch slurm --sut vllm:" + std::string(R3CHECK_TESTS) +
              " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --engine-launch: 'slurm' is not none | torchrun\n");
}

TEST(EngineFlagsTest, NprocTakesOneTo1024) {
  // In range, --nproc gets past the flag check to the next error (it needs an
  // engine); out of range, the flag itself is the error.
  for (const char* nproc : {"2", "1024"}) {
    const Result r = R3check(std::string("check --nproc ") + nproc + " seeds/tp2-dp2-eager.r3case");
    EXPECT_EQ(r.status, 2) << nproc;
    EXPECT_NE(r.err.find("--engine-*/--nproc: apply to an engine SUT"), std::string::npos)
        << nproc << ": " << r.err;
  }
  for (const char* nproc : {"0", "1025"}) {
    const Result r = R3check(std::string("check --nproc ") + nproc + " seeds/tp2-dp2-eager.r3case");
    EXPECT_EQ(r.status, 2) << nproc;
    EXPECT_EQ(r.err, std::string("r3check: --nproc: Value ") + nproc + " not in range 1 to 1024\n");
  }
  // 1 is the default: no engine flag given, the built-in SUT runs.
  EXPECT_EQ(R3check("check --nproc 1 seeds/tp2-dp2-eager.r3case").status, 0);
}

TEST(EngineFlagsTest, TorchrunLaunchRunsTheEnginePythonWithTheLauncherArguments) {
  // A stand-in for the interpreter that records its arguments and exits.
  const std::string argv_file = r3::testing::TempPath("engine-python-argv.txt");
  const std::string python = r3::testing::TempPath("engine-python.sh");
  std::filesystem::remove(argv_file);
  std::ofstream(python) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" << argv_file << "'\nexit 3\n";
  std::filesystem::permissions(python, std::filesystem::perms::owner_all);
  const std::string source = R3CHECK_TESTS;
  const Result r = R3check("check --sut vllm:" + source + " --engine-python " + python +
                           " --engine-launch torchrun --nproc 2 --engine-launch-arg=--nnodes=2"
                           " --engine-device cuda seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 2);
  // It may exit before or after r3check's hello reaches it: either way, one line.
  EXPECT_NE(r.err.find("(exited with status 3)\n"), std::string::npos) << r.err;
  const std::string argv = r3::testing::Slurp(argv_file);
  // python -m torch.distributed.run --nproc_per_node 2 --nnodes=2 ADAPTER --source ... --protocol-node
  EXPECT_TRUE(argv.starts_with("-m\ntorch.distributed.run\n--nproc_per_node\n2\n--nnodes=2\n/"))
      << argv;
  EXPECT_TRUE(argv.ends_with("/vllm/r3_adapter.py\n--source\n" + source +
                             "\n--device\ncuda\n--protocol-node\n"))
      << argv;
  EXPECT_EQ(std::count(argv.begin(), argv.end(), '\n'), 11) << argv;
  std::filesystem::remove(argv_file);
  std::filesystem::remove(python);
}

TEST(EngineFlagsTest, R3EnginesDirPointsAtTheAdaptersUnlessEmpty) {
  const std::string args = "check --sut vllm:" + std::string(R3CHECK_TESTS) +
                           " --engine-python /nonexistent/python seeds/tp2-dp2-eager.r3case";
  Result r = r3::testing::RunR3check(R3CHECK_SOURCE_CORPUS, args, "",
                                     "R3_ENGINES_DIR=/nonexistent/engines");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "r3check: --sut vllm: the adapter /nonexistent/engines/vllm/r3_adapter.py is "
                   "missing (set R3_ENGINES_DIR to the engines/ folder)\n");
  // Empty is unset: the source tree's adapters, so the run gets as far as
  // starting the (missing) interpreter.
  r = r3::testing::RunR3check(R3CHECK_SOURCE_CORPUS, args, "", "R3_ENGINES_DIR=");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.find("is missing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("r3check: engine vllm:"), std::string::npos) << r.err;
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
  EXPECT_EQ(R3check("engines extra").status, 2);
}

}  // namespace

// The vLLM adapter (engines/vllm) on the fixture engines in tests/engines/:
// the correct one passes, every broken one is caught and minimizes to a
// layout of at most DP 2, TP 2.
namespace {

bool HaveTorch() {
  return r3::testing::RunShell("/usr/bin/python3 -c 'import torch' 2>/dev/null").status == 0;
}

std::string Fixture(const std::string& name) {
  return "vllm:" + std::string(R3CHECK_TESTS) + "/engines/fixtures/" + name;
}

int64_t FieldOf(const std::string& text, const std::string& key) {
  const size_t at = text.find("\n" + key + " ");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size() + 2));
}

TEST(EngineFixtureTest, TheCorrectEnginePassesVerify) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (bash scripts/setup.sh)";
  for (const std::string name : {"post50874", "legacy-singleton", "noisy"}) {
    const Result r = R3check("verify --cases 300 --sut " + Fixture(name));
    EXPECT_EQ(r.status, 0) << name << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("verify: OK"), std::string::npos) << name << "\n" << r.out;
    // The header names the file the engine code came from, with its hash.
    EXPECT_NE(r.out.find("sut " + Fixture(name) + " (sha256 "), std::string::npos) << r.out;
  }
}

TEST(EngineFixtureTest, TheDecodePadFindingShowsFromTheEnginesOwnCode) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (bash scripts/setup.sh)";
  const Result r =
      R3check("check --sut " + Fixture("post50874") + " findings/internal-sp-decode-pad.r3case");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PASS with 5 known-finding violation(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[3 rows-exact] dp0/tp1 (branch local, n=1) captured pad1, expected "
                       "dp0[0..1)  (known finding internal-sp-decode-pad)"),
            std::string::npos)
      << r.out;
}

// The device-cache design (upstream v0.21.0): the correct fixture passes the
// layouts it accepts (its host rows on TP rank 0, its device rows elsewhere)
// and refuses SP with its own NotImplementedError, as v0.21.0 does.
TEST(EngineFixtureTest, TheDeviceCacheEnginePassesTheLayoutsItAccepts) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (bash scripts/setup.sh)";
  const std::string internal = r3::testing::TempPath("device_cache_internal.r3case");
  std::ofstream(internal) << "r3case 1\ndp 2\ntp 2\nep on\ndispatch internal\nsp off\n"
                             "max_num_batched_tokens 64\ntop_k 8\nnum_experts 256\nnum_layers 2\ntokens 5 3\n";
  Result r = R3check("check --sut " + Fixture("device-cache") + " seeds/dp1-tp1-graph.r3case " + internal);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 passed, 0 failed"), std::string::npos) << r.out;
  r = R3check("check --sut " + Fixture("device-cache") + " seeds/tp2-dp2-eager.r3case");
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[3 rows-exact] dp0/tp0 (branch error, n=10) raised NotImplementedError: building the "
                       "capturer: fixture: routing capture does not support sequence parallelism"),
            std::string::npos)
      << r.out;
}

struct Broken {
  std::string fixture;
  std::string seed;  // a corpus case it fails
};

class BrokenEngineTest : public ::testing::TestWithParam<Broken> {};

TEST_P(BrokenEngineTest, IsCaughtAndMinimizesSmall) {
  if (!HaveTorch()) GTEST_SKIP() << "no torch for /usr/bin/python3 (bash scripts/setup.sh)";
  const Result verify = R3check("verify --cases 300 --sut " + Fixture(GetParam().fixture));
  EXPECT_EQ(verify.status, 1) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("verify: FAILED"), std::string::npos) << verify.out;
  const Result min = R3check("minimize --sut " + Fixture(GetParam().fixture) + " seeds/" +
                             GetParam().seed + ".r3case");
  ASSERT_EQ(min.status, 0) << min.out << min.err;
  EXPECT_GE(FieldOf(min.out, "dp"), 1) << min.out;
  EXPECT_LE(FieldOf(min.out, "dp"), 2) << min.out;
  EXPECT_GE(FieldOf(min.out, "tp"), 1) << min.out;
  EXPECT_LE(FieldOf(min.out, "tp"), 2) << min.out;
  // The minimized case fails the engine when checked on its own.
  const std::string path = r3::testing::TempPath("engine_min.r3case");
  std::ofstream(path) << min.out;
  const Result again = R3check("check --sut " + Fixture(GetParam().fixture) + " " + path);
  EXPECT_EQ(again.status, 1) << again.out << again.err;
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BrokenEngineTest,
    ::testing::Values(Broken{"pre50874", "tp2-dp2-eager"}, Broken{"no-sp-trim", "tp2-dp2-eager"},
                      Broken{"shard-start-without-s", "tp2-dp2-eager"},
                      Broken{"no-tp-gather", "tp2-dp2-internal-sp"},
                      Broken{"partial-gather", "tp2-dp2-internal-sp"},
                      Broken{"stray-writes", "tp2-dp2-eager"},
                      Broken{"garbage-writes", "tp2-dp2-eager"},
                      Broken{"device-cache-staging-shift", "dp1-tp1-graph"}),
    [](const ::testing::TestParamInfo<Broken>& info) { return Identifier(info.param.fixture); });

}  // namespace
