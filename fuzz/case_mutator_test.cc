#include "fuzz/case_mutator.h"

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/fuzz_sut.h"
#include "r3/case/case_format.h"
#include "r3/sut/mutants.h"

namespace r3::fuzz {
namespace {

Case Seed() {
  return ParseCase(
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8192\n"
      "top_k 8\nnum_experts 256\nnum_layers 1\ntokens 5 3\n",
      "seed");
}

TEST(CaseMutatorTest, MutatedCasesStayValidAndWithinTheMutatorBounds) {
  Rng rng(/*seed=*/1);
  Case c = Seed();
  int valid = 0;
  for (int i = 0; i < 20000; ++i) {
    Case next = c;
    if (!MutateCase(next, rng)) continue;
    ++valid;
    ASSERT_EQ(ValidateCase(next).field, "") << PrintCase(next);
    ASSERT_LE(next.config.dp, kMutatorMaxDp);
    ASSERT_LE(next.config.tp, kMutatorMaxTp);
    ASSERT_EQ(ParseCase(PrintCase(next), "printed"), next);
    c = (i % 64 == 0) ? Seed() : next;  // random walk with restarts
  }
  EXPECT_GT(valid, 19000);
}

TEST(CaseMutatorTest, SameSeedGivesTheSameMutation) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Case a = Seed();
    Case b = Seed();
    Rng ra(seed);
    Rng rb(seed);
    ASSERT_EQ(MutateCase(a, ra), MutateCase(b, rb));
    EXPECT_EQ(PrintCase(a), PrintCase(b));
  }
}

// The edits a person would make all happen, boundary values included.
TEST(CaseMutatorTest, ReachesTheFeaturesThatMatter) {
  Rng rng(/*seed=*/7);
  std::set<std::string> seen;
  Case c = Seed();
  for (int i = 0; i < 20000; ++i) {
    Case next = c;
    if (!MutateCase(next, rng)) continue;
    const Config& cfg = next.config;
    if (cfg.dp == 1) seen.insert("dp1");
    if (cfg.dp >= 3) seen.insert("dp3+");
    if (cfg.tp == 1) seen.insert("tp1");
    if (cfg.tp >= 3) seen.insert("tp3+");
    if (!cfg.ep) seen.insert("ep-off");
    if (cfg.dispatch == Dispatch::kInternal) seen.insert("internal");
    if (cfg.sp == SpMode::kOn) seen.insert("sp-on");
    if (cfg.sp == SpMode::kOff) seen.insert("sp-off");
    if (next.step.tokens != next.step.padded) seen.insert("padding");
    for (size_t d = 0; d < next.step.tokens.size(); ++d) {
      if (next.step.tokens[d] == 0) seen.insert("idle-rank");
      if (next.step.padded[d] == cfg.max_num_batched_tokens) seen.insert("at-M");
      if (next.step.padded[d] % cfg.tp != 0) seen.insert("sp-pad");
    }
    if (cfg.num_experts > 32768) seen.insert("experts>int16");
    if (cfg.num_experts == 257) seen.insert("experts257");
    if (cfg.num_layers > 1) seen.insert("layers");
    if (cfg.top_k == 1) seen.insert("top_k1");
    c = (i % 32 == 0) ? Seed() : next;
  }
  const std::set<std::string> want = {"dp1", "dp3+", "tp1", "tp3+", "ep-off", "internal",
                                      "sp-on", "sp-off", "padding", "idle-rank", "at-M",
                                      "sp-pad", "experts>int16", "experts257", "layers",
                                      "top_k1"};
  for (const std::string& feature : want) EXPECT_EQ(seen.count(feature), 1u) << feature;
}

TEST(CaseMutatorTest, RandomCasesAreValid) {
  Rng rng(/*seed=*/3);
  for (int i = 0; i < 5000; ++i) {
    const Case c = RandomCase(rng);
    ASSERT_EQ(ValidateCase(c).field, "") << PrintCase(c);
  }
}

TEST(FuzzSutTest, FlagsOverrideTheEnvironment) {
  ::setenv("R3_FUZZ_MUTANT", "no-sp-trim", 1);
  ::setenv("R3_FUZZ_POLICY", "legacy", 1);
  std::string a0 = "fuzzer";
  std::string a1 = "--mutant=snapshot-int8,floor-shard-size";
  std::string a2 = "--sut=vllm-pre-50874";
  char* argv[] = {a0.data(), a1.data(), a2.data()};
  const sut::SutOptions options = SutOptionsFromEnvAndArgs(3, argv);
  ::unsetenv("R3_FUZZ_MUTANT");
  ::unsetenv("R3_FUZZ_POLICY");
  EXPECT_EQ(options.version, sut::Version::kPre50874);
  EXPECT_EQ(options.policy, sut::Policy::kLegacy);
  EXPECT_TRUE(options.mutants.has(sut::Mutant::kNoSpTrim));
  EXPECT_TRUE(options.mutants.has(sut::Mutant::kSnapshotInt8));
  EXPECT_TRUE(options.mutants.has(sut::MutantNamed("floor-shard-size")));
  EXPECT_FALSE(options.mutants.has(sut::MutantNamed("tp-major-ep-order")));
}

TEST(FuzzSutTest, TheEnvironmentAloneChoosesTheSut) {
  ::setenv("R3_FUZZ_SUT", "vllm-pre-50874", 1);
  std::string a0 = "fuzzer";
  char* argv[] = {a0.data()};
  const sut::SutOptions options = SutOptionsFromEnvAndArgs(1, argv);
  ::unsetenv("R3_FUZZ_SUT");
  EXPECT_EQ(options.version, sut::Version::kPre50874);
}

// argv[0] is the program, never a flag, whatever it is called.
TEST(FuzzSutTest, TheProgramNameIsNotReadAsAFlag) {
  std::string a0 = "--mutant=no-sp-trim";
  char* argv[] = {a0.data()};
  const sut::SutOptions options = SutOptionsFromEnvAndArgs(1, argv);
  EXPECT_TRUE(options.mutants.empty());
}

TEST(FuzzSutTest, UnknownNameExitsWithStatus2) {
  std::string a0 = "fuzzer";
  std::string a1 = "--mutant=no-such-mutant";
  char* argv[] = {a0.data(), a1.data()};
  EXPECT_EXIT(SutOptionsFromEnvAndArgs(2, argv), ::testing::ExitedWithCode(2),
              "--mutant: unknown name 'no-such-mutant'");
}

TEST(FuzzSutTest, UnknownSutAndPolicyExitWithStatus2) {
  for (const std::string flag : {"--sut=vllm-9", "--policy=roomy"}) {
    std::string a0 = "fuzzer";
    std::string a1 = flag;
    char* argv[] = {a0.data(), a1.data()};
    EXPECT_EXIT(SutOptionsFromEnvAndArgs(2, argv), ::testing::ExitedWithCode(2),
                flag.substr(0, flag.find('=')) + ": unknown name '" +
                    flag.substr(flag.find('=') + 1) + "'");
  }
}

}  // namespace
}  // namespace r3::fuzz
