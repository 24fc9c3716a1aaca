#include "fuzz/case_mutator.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/fuzz_sut.h"
#include "r3/case/case_format.h"
#include "r3/case/limits.h"
#include "r3/sut/mutants.h"
#include "r3check_config.h"
#include "tests/testing/approval.h"

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

// SplitMix64 is what makes a fuzz run's -seed replay on every platform:
// its first outputs for seed 0 are the published reference values.
TEST(CaseMutatorTest, TheRngIsSplitMix64) {
  Rng rng(/*seed=*/0);
  EXPECT_EQ(rng.Next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.Next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.Next(), 0x06c45d188009454fULL);
  Rng small(/*seed=*/5);
  for (int i = 0; i < 1000; ++i) {
    const int64_t below = small.Below(3);
    ASSERT_GE(below, 0);
    ASSERT_LT(below, 3);
    const int64_t between = small.Between(-2, 2);
    ASSERT_GE(between, -2);
    ASSERT_LE(between, 2);
  }
}

// The values the mutator names as boundaries (case_mutator.h) all come up
// in a walk from one seed case: expert counts around 256, 32768 and 65536,
// layer counts up to the limit, M at 1, 8192 and next to powers of two,
// token counts at 0..3, M and M - 1, TP and DP at the mutator's limits.
TEST(CaseMutatorTest, ReachesEveryBoundaryValueItNames) {
  Rng rng(/*seed=*/11);
  std::set<int64_t> experts, layers, m, tp, dp, top_k, counts;
  bool at_m = false;
  bool below_m = false;
  Case c = Seed();
  for (int i = 0; i < 50000; ++i) {
    Case next = c;
    if (!MutateCase(next, rng)) continue;
    const Config& cfg = next.config;
    experts.insert(cfg.num_experts);
    layers.insert(cfg.num_layers);
    m.insert(cfg.max_num_batched_tokens);
    tp.insert(cfg.tp);
    dp.insert(cfg.dp);
    top_k.insert(cfg.top_k);
    for (size_t d = 0; d < next.step.tokens.size(); ++d) {
      counts.insert(next.step.tokens[d]);
      at_m = at_m || next.step.tokens[d] == cfg.max_num_batched_tokens;
      below_m = below_m || next.step.tokens[d] + 1 == cfg.max_num_batched_tokens;
    }
    c = (i % 128 == 0) ? Seed() : next;  // long enough to double dp to the limit
  }
  auto expect_all = [](const std::set<int64_t>& seen, std::set<int64_t> want, const char* what) {
    for (int64_t v : want) EXPECT_EQ(seen.count(v), 1u) << what << " " << v << " never drawn";
  };
  expect_all(experts, {1, 8, 255, 256, 257, 32767, 32768, 32769, 65536, 65537}, "num_experts");
  expect_all(layers, {1, 2, 3, 4, 61, kMaxLayers}, "num_layers");
  expect_all(m, {1, 8192, 1023, 1024, 1025, 16383, 16384, 16385}, "max_num_batched_tokens");
  expect_all(tp, {1, 2, 3, 4, 8, kMutatorMaxTp}, "tp");
  expect_all(dp, {1, 2, 3, 4, 8, kMutatorMaxDp}, "dp");
  expect_all(top_k, {1, 2, 4, 8}, "top_k");
  expect_all(counts, {0, 1, 2, 3}, "tokens");
  EXPECT_TRUE(at_m) << "no rank at M";
  EXPECT_TRUE(below_m) << "no rank at M - 1";
}

// A new rank is idle, a copy of another or full; ranks are dropped from
// either end; a case over the mutator's rank limit is cut to it first and a
// case within it is not.
TEST(CaseMutatorTest, RanksAreAddedAndDroppedEveryWay) {
  const Case four = ParseCase(
      "r3case 1\ndp 4\ntp 1\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 2\nnum_experts 8\nnum_layers 1\ntokens 11 12 13 14\n",
      "four");
  std::set<std::string> seen;
  int at_limit = 0;
  Rng rng(/*seed=*/4);
  for (int i = 0; i < 20000; ++i) {
    Case next = four;
    if (!MutateCase(next, rng)) continue;
    const std::vector<int64_t>& t = next.step.tokens;
    if (t == std::vector<int64_t>{11, 12}) seen.insert("kept the front");
    if (t == std::vector<int64_t>{13, 14}) seen.insert("kept the back");
    if (t.size() == 5 && t[4] == 0) seen.insert("new idle rank");
    if (t.size() == 5 && t[4] >= 11 && t[4] <= 14) seen.insert("new copied rank");
    if (t.size() == 5 && t[4] == 64) seen.insert("new full rank");
    if (next.config.dp == kMutatorMaxDp) ++at_limit;
  }
  for (const char* way : {"kept the front", "kept the back", "new idle rank", "new copied rank",
                          "new full rank"}) {
    EXPECT_EQ(seen.count(way), 1u) << way;
  }
  EXPECT_LT(at_limit, 200) << "a 4-rank case grew to the rank limit too often";

  Case wide = four;
  wide.config.dp = kMutatorMaxDp * 2;
  wide.step.tokens.assign(static_cast<size_t>(wide.config.dp), 1);
  wide.step.padded.assign(static_cast<size_t>(wide.config.dp), 1);
  ASSERT_EQ(ValidateCase(wide).field, "");
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Case next = wide;
    Rng r(seed);
    if (!MutateCase(next, r)) continue;
    ASSERT_LE(next.config.dp, kMutatorMaxDp) << PrintCase(next);
  }
}

// The mutator's answer says whether the case it leaves is valid (the
// custom mutator falls back to libFuzzer's own mutation on false), and a
// case it cannot edit (no ranks, or padded counts that do not match the
// ranks, as a hand-edited corpus file can hold) is refused untouched.
TEST(CaseMutatorTest, SaysWhetherItsCaseIsValidAndRefusesMalformedOnes) {
  Rng rng(/*seed=*/9);
  int refused = 0;
  for (int i = 0; i < 20000; ++i) {
    Case next = Seed();
    next.config.tp = 1 + i % 16;
    const bool ok = MutateCase(next, rng);
    ASSERT_EQ(ok, ValidateCase(next).field.empty()) << PrintCase(next);
    refused += ok ? 0 : 1;
  }
  Case empty = Seed();
  empty.step.tokens.clear();
  empty.step.padded.clear();
  Case uneven = Seed();
  uneven.step.padded.pop_back();
  for (const Case& bad : {empty, uneven}) {
    Case c = bad;
    Rng r(/*seed=*/1);
    EXPECT_FALSE(MutateCase(c, r));
    EXPECT_EQ(c, bad) << "a refused case is left as it was";
  }
}

// A case over the mutator's rank limit is cut to it like any rank drop:
// from the end or from the front.
TEST(CaseMutatorTest, AWideCaseIsCutFromEitherEnd) {
  Case wide = Seed();
  wide.config.dp = kMutatorMaxDp * 2;
  wide.config.max_num_batched_tokens = 8192;
  wide.step.tokens.clear();
  for (int64_t d = 0; d < wide.config.dp; ++d) wide.step.tokens.push_back(d);
  wide.step.padded = wide.step.tokens;
  ASSERT_EQ(ValidateCase(wide).field, "");
  std::set<std::string> kept;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Case next = wide;
    Rng r(seed);
    if (!MutateCase(next, r) || next.step.tokens.size() < 3) continue;
    // an edit changes one rank at most: two of the first three tell the cut
    const auto& t = next.step.tokens;
    const int votes_front = (t[1] == 1) + (t[2] == 2);
    const int votes_back = (t[1] == kMutatorMaxDp + 1) + (t[2] == kMutatorMaxDp + 2);
    if (votes_front >= 1 && votes_back == 0) kept.insert("front ranks");
    if (votes_back >= 1 && votes_front == 0) kept.insert("back ranks");
  }
  EXPECT_EQ(kept, (std::set<std::string>{"front ranks", "back ranks"}));
}

// A fresh case covers the small layouts an empty corpus should start from.
TEST(CaseMutatorTest, RandomCasesCoverTheSmallLayouts) {
  Rng rng(/*seed=*/3);
  std::set<int64_t> dp, tp, m, experts, top_k;
  std::set<std::string> flags;
  for (int i = 0; i < 5000; ++i) {
    const Case c = RandomCase(rng);
    dp.insert(c.config.dp);
    tp.insert(c.config.tp);
    m.insert(c.config.max_num_batched_tokens);
    experts.insert(c.config.num_experts);
    top_k.insert(c.config.top_k);
    flags.insert(c.config.ep ? "ep" : "no-ep");
    flags.insert(c.config.dispatch == Dispatch::kInternal ? "internal" : "naive");
    EXPECT_EQ(c.config.sp, SpMode::kAuto);
    EXPECT_EQ(c.config.num_layers, 1);
    if (c.step.padded != c.step.tokens) flags.insert("padded");
  }
  EXPECT_EQ(dp, (std::set<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(tp, (std::set<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(m, (std::set<int64_t>{1, 4, 7, 8, 16, 64, 8192}));
  EXPECT_EQ(experts, (std::set<int64_t>{8, 256, 257}));
  EXPECT_EQ(top_k, (std::set<int64_t>{1, 2, 8}));
  EXPECT_EQ(flags, (std::set<std::string>{"ep", "no-ep", "internal", "naive", "padded"}));
}

// A fuzz run's -seed replays the same mutations on every machine and in every
// r3check version: the first mutations of a walk, the first fresh cases and
// digests (FNV-1a of the printed cases) of long runs are approved. An
// intended change updates them with R3_UPDATE_APPROVALS=1.
TEST(CaseMutatorTest, TheStreamOfASeedIsApproved) {
  std::ostringstream out;
  auto fnv = [](uint64_t digest, const std::string& text) {
    for (const char ch : text) digest = (digest ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
    return digest;
  };
  Rng rng(/*seed=*/7);
  Case c = Seed();
  uint64_t walk = 14695981039346656037ull;
  for (int i = 0; i < 20000; ++i) {
    Case next = c;
    const bool ok = MutateCase(next, rng);
    const std::string printed = ok ? PrintCase(next) : std::string("invalid\n");
    if (i < 12) out << "# mutation " << i << "\n" << printed << "\n";
    walk = fnv(walk, printed);
    if (ok) c = (i % 64 == 0) ? Seed() : next;
  }
  Rng fresh(/*seed=*/7);
  uint64_t random = 14695981039346656037ull;
  for (int i = 0; i < 5000; ++i) {
    const std::string printed = PrintCase(RandomCase(fresh));
    if (i < 6) out << "# random case " << i << "\n" << printed << "\n";
    random = fnv(random, printed);
  }
  // A case at the mutator's rank limit and one over it.
  for (const int64_t dp : {kMutatorMaxDp, kMutatorMaxDp + 1}) {
    Case at = Seed();
    at.config.dp = dp;
    at.step.tokens.assign(static_cast<size_t>(dp), 3);
    at.step.padded.assign(static_cast<size_t>(dp), 4);
    uint64_t digest = 14695981039346656037ull;
    Rng r(/*seed=*/7);
    for (int i = 0; i < 200; ++i) {
      Case next = at;
      digest = fnv(digest, MutateCase(next, r) ? PrintCase(next) : std::string("invalid\n"));
    }
    out << "# FNV-1a of 200 mutations of a " << dp << "-rank case: " << std::hex << digest
        << std::dec << "\n";
  }
  out << "# FNV-1a of a 20000-mutation walk: " << std::hex << walk << "\n"
      << "# FNV-1a of 5000 random cases: " << random << std::dec << "\n";
  testing::ExpectApproved("case_mutator_seed7.txt", out.str(), "the mutator's stream");
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
