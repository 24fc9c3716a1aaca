#include "r3/minimize/minimize.h"

#include <algorithm>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "r3/case/case_format.h"
#include "r3/check/run_case.h"

namespace r3::minimize {
namespace {

using check::Invariant;

const std::string kCorpus = R3CHECK_SOURCE_CORPUS;

sut::SutOptions WithMutant(sut::Mutant m) {
  sut::SutOptions options;
  options.mutants.set(m);
  return options;
}

MinimizeOptions Options(const sut::SutOptions& sut) {
  MinimizeOptions options;
  options.sut = sut;
  return options;
}

// The seeds with no known failing case of their own, where a mutant kills.
Case FirstKilledSeed(sut::Mutant m) {
  for (const char* name :
       {"tp2-dp2-eager", "tp2-dp2-ep-off", "tp2-dp2-warmup-odd-m", "tp2-dp2-internal-sp"}) {
    const Case c = LoadCaseFile(kCorpus + "/seeds/" + name + ".r3case");
    if (!UnexplainedInvariants(c, WithMutant(m)).empty()) return c;
  }
  ADD_FAILURE() << "no seed kills " << sut::GetMutantInfo(m).name;
  return {};
}

TEST(MinimizeTest, NoSpTrimShrinksToTheSmallestPaddedShardGroup) {
  const Case input = LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case");
  const MinimizeResult r = Minimize(input, Options(WithMutant(sut::Mutant::kNoSpTrim)));
  ASSERT_TRUE(r.input_fails);
  EXPECT_EQ(r.kept, (std::vector<Invariant>{Invariant::kRowsExact, Invariant::kConcatGlobal}));
  // DP1 has 1 token: its shard group holds one SP padding row, which the
  // mutant copies into DP1's capture.
  EXPECT_EQ(PrintCase(r.minimal),
            "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 1\n"
            "top_k 1\nnum_experts 1\nnum_layers 1\ntokens 0 1\n");
  EXPECT_FALSE(r.budget_exhausted);
  EXPECT_GT(r.accepted, 0);
}

TEST(MinimizeTest, EveryHostMutantShrinksToACaseThatStillFailsTheSameWay) {
  for (const sut::MutantInfo& info : sut::MutantCatalogue()) {
    if (info.equivalent || info.gpu_only) continue;
    SCOPED_TRACE(std::string(info.name));
    const sut::SutOptions options = WithMutant(info.id);
    const Case input = FirstKilledSeed(info.id);
    const MinimizeResult r = Minimize(input, Options(options));
    ASSERT_TRUE(r.input_fails);
    EXPECT_EQ(UnexplainedInvariants(r.minimal, options), r.input_failure);
    EXPECT_LE(r.minimal.config.dp, input.config.dp);
    EXPECT_LE(r.minimal.config.tp, input.config.tp);
    EXPECT_LE(r.minimal.config.max_num_batched_tokens, input.config.max_num_batched_tokens);
    // A regression case for the mutant, not for vLLM: the real SUT passes.
    EXPECT_TRUE(check::RunCase(r.minimal, sut::SutOptions{}).PassesOrKnown());
  }
}

TEST(MinimizeTest, MinimalCaseIsAFixedPoint) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kSpGatherDpGroup);
  const Case input = LoadCaseFile(kCorpus + "/seeds/tp4-dp3-idle-rank.r3case");
  const MinimizeResult once = Minimize(input, Options(options));
  ASSERT_TRUE(once.input_fails);
  const MinimizeResult twice = Minimize(once.minimal, Options(options));
  EXPECT_EQ(twice.minimal, once.minimal);
  EXPECT_EQ(twice.accepted, 0);
}

TEST(MinimizeTest, SameInputGivesByteIdenticalText) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kFloorShardSize);
  const Case input = LoadCaseFile(kCorpus + "/seeds/tp4-dp3-idle-rank.r3case");
  const std::string a = MinimizedText(Minimize(input, Options(options)), options);
  const std::string b = MinimizedText(Minimize(input, Options(options)), options);
  EXPECT_EQ(a, b);
}

TEST(MinimizeTest, TextIsACaseFileOfTheMinimalCase) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kTpMajorEpOrder);
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-warmup.r3case"), Options(options));
  const std::string text = MinimizedText(r, options);
  EXPECT_EQ(ParseCase(text, "minimized"), r.minimal);
  EXPECT_NE(text.find("# r3check minimize: invariants 3 rows-exact, 4 concat-global fail"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("mutant tp-major-ep-order"), std::string::npos) << text;
}

TEST(MinimizeTest, PassingCaseHasNothingToMinimize) {
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case"), Options({}));
  EXPECT_FALSE(r.input_fails);
  EXPECT_TRUE(r.input_failure.empty());
  EXPECT_EQ(r.tried, 0);
}

TEST(MinimizeTest, KnownFindingsAreNotFailuresToMinimize) {
  for (const char* name : {"internal-sp-decode-pad", "replay-int16-experts"}) {
    const Case c = LoadCaseFile(kCorpus + "/findings/" + name + ".r3case");
    EXPECT_FALSE(Minimize(c, Options({})).input_fails) << name;
  }
}

TEST(MinimizeTest, FieldReportSaysWhatMattersAndWhatDoesNot) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kSnapshotInt8);
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case"), Options(options));
  ASSERT_TRUE(r.input_fails);
  // int8 holds ids up to 127: 129 experts (max id 128) is the smallest failure.
  EXPECT_EQ(r.minimal.config.num_experts, 129);
  bool saw_experts = false;
  for (const FieldReport& f : r.fields) {
    if (f.field == "num_experts") {
      saw_experts = true;
      EXPECT_FALSE(f.free());
      ASSERT_FALSE(f.probes.empty());
      EXPECT_EQ(f.probes[0].value, "128");
      EXPECT_EQ(f.probes[0].outcome, "passes");
    }
    if (f.field == "num_layers" || f.field == "dp") {
      EXPECT_TRUE(f.free()) << f.field;
    }
  }
  EXPECT_TRUE(saw_experts);
}

TEST(MinimizeTest, SingleInvariantModeKeepsOnlyThatInvariant) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kSpGatherDpGroup);
  MinimizeOptions mo = Options(options);
  mo.invariant = Invariant::kTpAgree;
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case"), mo);
  ASSERT_TRUE(r.input_fails);
  EXPECT_EQ(r.kept, std::vector<Invariant>{Invariant::kTpAgree});
  const std::vector<Invariant> got = UnexplainedInvariants(r.minimal, options);
  EXPECT_NE(std::find(got.begin(), got.end(), Invariant::kTpAgree), got.end());
}

TEST(MinimizeTest, EvaluationBudgetStopsEarlyWithAFailingCase) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kNoSpTrim);
  MinimizeOptions mo = Options(options);
  mo.max_evaluations = 3;
  const Case input = LoadCaseFile(kCorpus + "/seeds/tp4-dp3-idle-rank.r3case");
  const MinimizeResult r = Minimize(input, mo);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_LE(r.tried, 3);
  EXPECT_EQ(UnexplainedInvariants(r.minimal, options), r.input_failure);
  EXPECT_NE(MinimizedText(r, options).find("budget exhausted"), std::string::npos);
}

// The header's claims, checked from outside the minimizer: the invariants
// it names fail on the minimal case (and nothing else unexplained), every
// field it calls free keeps that failure under each alternative it probed,
// and every "alternative -> outcome" line it prints is what the SUT does.
std::vector<Invariant> HeaderInvariants(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  std::vector<Invariant> out;
  for (int i = 1; i <= check::kNumInvariants; ++i) {
    const auto inv = static_cast<Invariant>(i);
    const std::string name = std::to_string(i) + " " + std::string(check::InvariantName(inv));
    if (line.find(" " + name + ",") != std::string::npos ||
        line.find(" " + name + " ") != std::string::npos) {
      out.push_back(inv);
    }
  }
  return out;
}

std::vector<std::string> HeaderFreeFields(const std::string& text) {
  const std::string key = "# Fields that can vary without changing the failure:";
  const size_t at = text.find(key);
  std::istringstream words(text.substr(at + key.size(), text.find('\n', at) - at - key.size()));
  std::vector<std::string> out;
  for (std::string w; words >> w;) {
    if (w != "none") out.push_back(w);
  }
  return out;
}

// The minimal case with `field` set to `value`, the way the header means it.
Case WithField(const Case& c, const std::string& field, const std::string& value) {
  Case n = c;
  Config& cfg = n.config;
  const auto number = [&] { return std::stoll(value); };
  if (field == "dp") {
    const int64_t dp = number();
    n.step.tokens.resize(static_cast<size_t>(dp), c.step.tokens.back());  // a copy of the last rank
    n.step.padded.resize(static_cast<size_t>(dp), c.step.padded.back());
    cfg.dp = dp;
  } else if (field == "tp") {
    cfg.tp = number();
  } else if (field == "ep") {
    cfg.ep = value == "on";
  } else if (field == "dispatch") {
    cfg.dispatch = value == "internal" ? Dispatch::kInternal : Dispatch::kNaive;
  } else if (field == "sp") {
    cfg.sp = value == "on" ? SpMode::kOn : value == "off" ? SpMode::kOff : SpMode::kAuto;
  } else if (field == "max_num_batched_tokens") {
    cfg.max_num_batched_tokens = number();
  } else if (field == "top_k") {
    cfg.top_k = number();
  } else if (field == "num_experts") {
    cfg.num_experts = number();
  } else if (field == "num_layers") {
    cfg.num_layers = number();
  } else {
    const size_t d = std::stoul(field.substr(field.find('[') + 1));
    if (field.rfind("tokens", 0) == 0) {
      n.step.tokens[d] = number();
      n.step.padded[d] = std::max(n.step.padded[d], n.step.tokens[d]);  // padding kept consistent
    } else {
      n.step.padded[d] = number();
    }
  }
  return n;
}

TEST(MinimizeTest, EveryMutantsResultHoldsToItsHeader) {
  for (const sut::MutantInfo& info : sut::MutantCatalogue()) {
    if (info.equivalent || info.gpu_only) continue;
    SCOPED_TRACE(std::string(info.name));
    const sut::SutOptions options = WithMutant(info.id);
    const MinimizeResult r = Minimize(FirstKilledSeed(info.id), Options(options));
    ASSERT_TRUE(r.input_fails);
    const std::string text = MinimizedText(r, options);
    const Case minimal = ParseCase(text, "minimized");
    EXPECT_EQ(UnexplainedInvariants(minimal, options), HeaderInvariants(text)) << text;
    const std::vector<std::string> free = HeaderFreeFields(text);
    for (const FieldReport& f : r.fields) {
      const bool said_free = std::find(free.begin(), free.end(), f.field) != free.end();
      EXPECT_EQ(said_free, f.free()) << f.field << "\n" << text;
      for (const FieldProbe& p : f.probes) {
        // An alternative is another value: a probe of the field's own value
        // would call any field free.
        EXPECT_NE(p.value, f.value) << f.field << "\n" << text;
        const Case alt = WithField(minimal, f.field, p.value);
        ASSERT_EQ(ValidateCase(alt).field, "") << f.field << " = " << p.value;
        const std::vector<Invariant> got = UnexplainedInvariants(alt, options);
        if (said_free || p.outcome == "same failure") {
          EXPECT_EQ(got, HeaderInvariants(text))
              << f.field << " = " << p.value << " is called free / the same failure\n" << text;
        } else if (p.outcome == "passes") {
          EXPECT_TRUE(got.empty()) << f.field << " = " << p.value << " is said to pass\n" << text;
        } else {
          EXPECT_NE(got, HeaderInvariants(text)) << f.field << " = " << p.value << "\n" << text;
          EXPECT_FALSE(got.empty()) << f.field << " = " << p.value << "\n" << text;
        }
      }
    }
  }
}

TEST(MinimizeTest, DefaultRegressionNameNamesMutantPolicyAndInvariants) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kShardStartWithoutS);
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case"), Options(options));
  EXPECT_EQ(DefaultRegressionName(r, options), "shard-start-without-S-pr50874-inv3-4");
}

TEST(MinimizeTest, TheFieldReportCoversEveryField) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kNoSpTrim);
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case"), Options(options));
  ASSERT_TRUE(r.input_fails);
  std::vector<std::string> names;
  for (const FieldReport& f : r.fields) names.push_back(f.field);
  // Fields that always have a valid alternative (top_k, num_experts and
  // num_layers at 1 may have none and are then left out).
  for (const char* field : {"dp", "tp", "ep", "dispatch", "sp", "max_num_batched_tokens"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), field), names.end()) << field;
  }
  for (size_t d = 0; d < r.minimal.step.tokens.size(); ++d) {
    const std::string token = "tokens[" + std::to_string(d) + "]";
    EXPECT_NE(std::find(names.begin(), names.end(), token), names.end()) << token;
  }
}

TEST(MinimizeTest, APassingCaseComesBackUnchanged) {
  const Case eager = LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case");
  const MinimizeResult r = Minimize(eager, Options({}));
  EXPECT_FALSE(r.input_fails);
  EXPECT_EQ(r.minimal, eager);
}

// An engine's id can hold any character; the default regression name is
// a safe file name all the same.
class NamedEngine : public sut::ExternalSut {
 public:
  std::vector<sut::Observation> Run(std::span<const Case>, const sut::SutOptions&) override {
    return {};
  }
  std::string Label() const override { return "vllm:/x y"; }
  std::string Id() const override { return "my engine/v2:fork"; }
};

TEST(MinimizeTest, DefaultRegressionNameIsAFileName) {
  sut::SutOptions options;
  options.external = std::make_shared<NamedEngine>();
  MinimizeResult r;
  r.kept = {Invariant::kRowsExact, Invariant::kTpAgree};
  EXPECT_EQ(DefaultRegressionName(r, options), "my-engine-v2-fork-pr50874-inv3-5");
}

}  // namespace
}  // namespace r3::minimize
