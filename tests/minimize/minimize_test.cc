#include "r3/minimize/minimize.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <utility>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "r3/case/case_format.h"
#include "r3/check/run_case.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/sut.h"
#include "r3check_config.h"
#include "tests/testing/ascend_observation.h"

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
  options.producer = sut::MakeHostProducer(sut);
  return options;
}

// The seeds with no known failing case of their own, where a mutant kills.
Case FirstKilledSeed(sut::Mutant m) {
  for (const char* name :
       {"tp2-dp2-eager", "tp2-dp2-ep-off", "tp2-dp2-warmup-odd-m", "tp2-dp2-internal-sp"}) {
    const Case c = LoadCaseFile(kCorpus + "/seeds/" + name + ".r3case");
    if (!UnexplainedInvariants(c, *sut::MakeHostProducer(WithMutant(m))).empty()) return c;
  }
  ADD_FAILURE() << "no seed kills " << sut::GetMutantInfo(m).name;
  return {};
}

// The host SUT seen through an engine with fewer layouts than vLLM's
// (SGLang's): a case outside them is refused, as an engine refuses it.
class NarrowProducer : public sut::Producer {
 public:
  explicit NarrowProducer(const sut::SutOptions& options)
      : Producer(options), host_(sut::MakeHostProducer(options)) {}
  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    for (const Case& c : cases) {
      const FieldError e = OutsideDomain(Domain(), c, "narrow");
      if (!e.field.empty()) throw sut::ExternalSutError("outside: " + e.field);
    }
    return host_->Observe(cases);
  }
  std::string Label() const override { return "narrow"; }
  std::string Id() const override { return "narrow"; }
  LayoutDomain Domain() const override {
    return {.internal_dispatch = false, .sequence_parallel = false, .chunked_prefill = true,
            .vllm_findings = false};
  }

 private:
  std::shared_ptr<sut::Producer> host_;
};

// The shrinking only moves toward naive dispatch and SP off (never sp off
// -> auto where auto turns SP on), so it stays in an engine's layouts; the
// field report, which tries every choice (dispatch internal, sp on), skips
// the ones outside them instead of counting them unrunnable.
TEST(MinimizeTest, NeverLeavesTheProducersLayouts) {
  const sut::SutOptions sut = WithMutant(sut::Mutant::kNaiveDpEndOffByOne);
  MinimizeOptions options;
  options.producer = std::make_shared<NarrowProducer>(sut);
  const Case input = ParseCase(
      "r3case 1\ndp 3\ntp 2\nep on\ndispatch naive\nsp off\nmax_num_batched_tokens 64\n"
      "top_k 4\nnum_experts 64\nnum_layers 2\ntokens 9 4 7\nchunked_prefill_size 16\n",
      "t");
  const MinimizeResult r = Minimize(input, options);
  EXPECT_EQ(r.unrunnable, 0) << r.first_unrunnable;
  EXPECT_EQ(OutsideDomain(options.producer->Domain(), r.minimal, "narrow").field, "");
  EXPECT_FALSE(UnexplainedInvariants(r.minimal, *options.producer).empty());
  EXPECT_EQ(r.minimal.config.chunked_prefill_size, 0);  // nothing here needs the chunk: dropped
  const std::string text = MinimizedText(r, *options.producer);
  EXPECT_EQ(text.find("internal ->"), std::string::npos) << text;
}

// A producer of vllm-ascend's layouts (comm types only) that fails on MC2
// at tp >= 2: the comm ladder's "none" leaves the layouts and is skipped,
// never tried (the engine would refuse it), so nothing is unrunnable.
class AscendFailsOnMc2 : public sut::Producer {
 public:
  AscendFailsOnMc2() : Producer({}) {}
  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    std::vector<sut::Observation> out;
    for (const Case& c : cases) {
      const FieldError e = OutsideDomain(Domain(), c, "ascend");
      if (!e.field.empty()) throw sut::ExternalSutError("outside: " + e.field);
      sut::Observation obs = testing::AscendOwnRows(c, options());
      if (c.config.moe_comm == MoeComm::kMc2 && c.config.tp >= 2) obs.ranks[0].error = "synthetic";
      out.push_back(std::move(obs));
    }
    return out;
  }
  std::string Label() const override { return "ascend"; }
  std::string Id() const override { return "ascend"; }
  LayoutDomain Domain() const override { return testing::kAscendDomain; }
};

TEST(MinimizeTest, TheCommTypeShrinksWithinVllmAscendsLayouts) {
  MinimizeOptions options;
  options.producer = std::make_shared<AscendFailsOnMc2>();
  const Case input = ParseCase(
      "r3case 1\ndp 3\ntp 4\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\n"
      "top_k 4\nnum_experts 64\nnum_layers 2\ntokens 9 4 7\nmoe_comm mc2\n",
      "t");
  const MinimizeResult r = Minimize(input, options);
  EXPECT_EQ(r.unrunnable, 0) << r.first_unrunnable;
  EXPECT_EQ(r.minimal.config.moe_comm, MoeComm::kMc2);
  EXPECT_EQ(r.minimal.config.tp, 2);
  EXPECT_EQ(r.minimal.config.dp, 1);
  Case gathered = r.minimal;
  gathered.config.moe_comm = MoeComm::kAllGather;  // the ladder's next value passes
  EXPECT_TRUE(UnexplainedInvariants(gathered, *options.producer).empty());
}

// The host SUT with one synthetic failure: rank 0 raises where `fails`
// holds for the case's config.
class FailsWhen : public sut::Producer {
 public:
  explicit FailsWhen(std::function<bool(const Config&)> fails)
      : Producer({}), host_(sut::MakeHostProducer()), fails_(std::move(fails)) {}
  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    std::vector<sut::Observation> out = host_->Observe(cases);
    for (size_t i = 0; i < cases.size(); ++i) {
      if (fails_(cases[i].config)) out[i].ranks[0].error = "synthetic";
    }
    return out;
  }
  std::string Label() const override { return "fails-when"; }
  std::string Id() const override { return "fails-when"; }

 private:
  std::shared_ptr<sut::Producer> host_;
  std::function<bool(const Config&)> fails_;
};

Case OneToken(int64_t m, int64_t chunk) {
  return ParseCase("r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens " +
                       std::to_string(m) + "\ntop_k 1\nnum_experts 1\nnum_layers 1\ntokens 1\n" +
                       "chunked_prefill_size " + std::to_string(chunk) + "\n",
                   "t");
}

// A chunk of 1 to 3 rows at M >= 32: a failure the M ladder cannot reach
// (each smaller M clamps the chunk below it, each larger chunk passes), so
// the chunk's own ladder takes it to 1.
TEST(MinimizeTest, TheChunkShrinksOnItsOwnLadderToOne) {
  MinimizeOptions options;
  options.producer = std::make_shared<FailsWhen>([](const Config& c) {
    return c.chunked_prefill_size >= 1 && c.chunked_prefill_size <= 3 && c.max_num_batched_tokens >= 32;
  });
  const MinimizeResult r = Minimize(OneToken(/*m=*/64, /*chunk=*/3), options);
  EXPECT_EQ(r.minimal.config.chunked_prefill_size, 1);
  EXPECT_EQ(r.minimal.config.max_num_batched_tokens, 32);
  const std::string text = MinimizedText(r, *options.producer);
  EXPECT_NE(text.find("#   chunked_prefill_size = 1: 0 -> passes; 2 -> same failure\n"), std::string::npos)
      << text;
}

// A chunk equal to M (SGLang's buffer is short only with the chunk at the
// step budget, say): a smaller M takes the chunk down with it.
TEST(MinimizeTest, ASmallerMTakesTheChunkDownWithIt) {
  MinimizeOptions options;
  options.producer = std::make_shared<FailsWhen>(
      [](const Config& c) { return c.chunked_prefill_size == c.max_num_batched_tokens; });
  const MinimizeResult r = Minimize(OneToken(/*m=*/64, /*chunk=*/64), options);
  EXPECT_EQ(r.minimal.config.max_num_batched_tokens, 1);
  EXPECT_EQ(r.minimal.config.chunked_prefill_size, 1);
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
    EXPECT_EQ(UnexplainedInvariants(r.minimal, *sut::MakeHostProducer(options)), r.input_failure);
    EXPECT_LE(r.minimal.config.dp, input.config.dp);
    EXPECT_LE(r.minimal.config.tp, input.config.tp);
    EXPECT_LE(r.minimal.config.max_num_batched_tokens, input.config.max_num_batched_tokens);
    // A regression case for the mutant, not for vLLM: the real SUT passes.
    EXPECT_TRUE(check::RunCase(r.minimal, sut::SutOptions{}).PassesOrKnown());
  }
}

TEST(MinimizeTest, MinimalCaseIsAFixedPoint) {
  const sut::SutOptions options = WithMutant(sut::MutantNamed("sp-gather-dp-group"));
  const Case input = LoadCaseFile(kCorpus + "/seeds/tp4-dp3-idle-rank.r3case");
  const MinimizeResult once = Minimize(input, Options(options));
  ASSERT_TRUE(once.input_fails);
  const MinimizeResult twice = Minimize(once.minimal, Options(options));
  EXPECT_EQ(twice.minimal, once.minimal);
  EXPECT_EQ(twice.accepted, 0);
}

TEST(MinimizeTest, SameInputGivesByteIdenticalText) {
  const sut::SutOptions options = WithMutant(sut::MutantNamed("floor-shard-size"));
  const Case input = LoadCaseFile(kCorpus + "/seeds/tp4-dp3-idle-rank.r3case");
  const std::string a = MinimizedText(Minimize(input, Options(options)), *sut::MakeHostProducer(options));
  const std::string b = MinimizedText(Minimize(input, Options(options)), *sut::MakeHostProducer(options));
  EXPECT_EQ(a, b);
}

TEST(MinimizeTest, TextIsACaseFileOfTheMinimalCase) {
  const sut::SutOptions options = WithMutant(sut::MutantNamed("tp-major-ep-order"));
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-warmup.r3case"), Options(options));
  const std::string text = MinimizedText(r, *sut::MakeHostProducer(options));
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
  EXPECT_EQ(r.accepted, 0);  // no shrinking step was taken
  EXPECT_FALSE(r.budget_exhausted);
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
  const sut::SutOptions options = WithMutant(sut::MutantNamed("sp-gather-dp-group"));
  MinimizeOptions mo = Options(options);
  mo.invariant = Invariant::kTpAgree;
  const MinimizeResult r =
      Minimize(LoadCaseFile(kCorpus + "/seeds/tp2-dp2-eager.r3case"), mo);
  ASSERT_TRUE(r.input_fails);
  EXPECT_EQ(r.kept, std::vector<Invariant>{Invariant::kTpAgree});
  const std::vector<Invariant> got = UnexplainedInvariants(r.minimal, *sut::MakeHostProducer(options));
  EXPECT_NE(std::find(got.begin(), got.end(), Invariant::kTpAgree), got.end());
  // One invariant kept: the header says so in the singular.
  const std::string text = MinimizedText(r, *sut::MakeHostProducer(options));
  EXPECT_EQ(text.rfind("# r3check minimize: invariant 5 tp-agree fails and no known finding", 0),
            0u)
      << text;
}

TEST(MinimizeTest, EvaluationBudgetStopsEarlyWithAFailingCase) {
  const sut::SutOptions options = WithMutant(sut::Mutant::kNoSpTrim);
  MinimizeOptions mo = Options(options);
  mo.max_evaluations = 3;
  const Case input = LoadCaseFile(kCorpus + "/seeds/tp4-dp3-idle-rank.r3case");
  const MinimizeResult r = Minimize(input, mo);
  EXPECT_TRUE(r.budget_exhausted);
  EXPECT_LE(r.tried, 3);
  EXPECT_EQ(UnexplainedInvariants(r.minimal, *sut::MakeHostProducer(options)), r.input_failure);
  EXPECT_NE(MinimizedText(r, *sut::MakeHostProducer(options)).find("budget exhausted"), std::string::npos);
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
    const std::string text = MinimizedText(r, *sut::MakeHostProducer(options));
    const Case minimal = ParseCase(text, "minimized");
    EXPECT_EQ(UnexplainedInvariants(minimal, *sut::MakeHostProducer(options)), HeaderInvariants(text)) << text;
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
        const std::vector<Invariant> got = UnexplainedInvariants(alt, *sut::MakeHostProducer(options));
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
  EXPECT_EQ(DefaultRegressionName(r, *sut::MakeHostProducer(options)), "shard-start-without-S-pr50874-inv3-4");
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
class NamedEngine : public sut::Producer {
 public:
  NamedEngine() : Producer({}) {}
  std::vector<sut::Observation> Observe(std::span<const Case>) override { return {}; }
  std::string Label() const override { return "vllm:/x y"; }
  std::string Id() const override { return "my engine/v2:fork"; }
};

TEST(MinimizeTest, DefaultRegressionNameIsAFileName) {
  MinimizeResult r;
  r.kept = {Invariant::kRowsExact, Invariant::kTpAgree};
  EXPECT_EQ(DefaultRegressionName(r, NamedEngine()), "my-engine-v2-fork-pr50874-inv3-5");
}

// docs/fuzzing.md: `--budget-ms` defaults to 10 s (the CLI takes its default
// from here) and 200 000 evaluations is the deterministic cap.
TEST(MinimizeTest, DefaultBudgetsAreTheDocumentedOnes) {
  const MinimizeOptions options;
  EXPECT_EQ(options.budget_ms, 10000);
  EXPECT_EQ(options.max_evaluations, 200000);
}

// An engine whose capture is the built-in SUT's, except on the cases the
// script picks: `fails` narrows its snapshot dtype (invariant 6, which no
// known finding explains), `differs` shrinks its capturer buffer
// (invariant 2), `breaks` makes it throw. It records every case it is handed,
// in order: the input, then the minimizer's candidates, then its probes.
class ScriptedEngine : public sut::Producer {
 public:
  using Pick = std::function<bool(const Case&)>;
  explicit ScriptedEngine(Pick fails, Pick differs = nullptr, Pick breaks = nullptr)
      : Producer({}),
        fails_(std::move(fails)),
        differs_(std::move(differs)),
        breaks_(std::move(breaks)) {}

  std::vector<sut::Observation> Observe(std::span<const Case> cases) override {
    const sut::SutOptions& builtin = options();
    std::vector<sut::Observation> out;
    for (const Case& c : cases) {
      seen.push_back(c);
      if (!ValidateCase(c).field.empty()) throw sut::ExternalSutError("handed an invalid case");
      if (breaks_ && breaks_(c)) throw sut::ExternalSutError("the engine died");
      sut::Observation o = sut::RunSut(c, builtin);
      if (fails_(c)) o.snapshot_max_id = -1;
      if (differs_ && differs_(c)) o.capturer_rows = -1;
      out.push_back(std::move(o));
    }
    return out;
  }
  std::string Label() const override { return "scripted"; }
  std::string Id() const override { return "scripted"; }

  std::vector<Case> seen;

 private:
  Pick fails_;
  Pick differs_;
  Pick breaks_;
};

struct ScriptedRun {
  MinimizeResult result;
  std::vector<Case> candidates;  // what the greedy loop evaluated, in order
};

ScriptedRun MinimizeScripted(const Case& input, const std::shared_ptr<ScriptedEngine>& engine,
                             MinimizeOptions options = {}) {
  options.producer = engine;
  ScriptedRun run;
  run.result = Minimize(input, options);
  const std::vector<Case>& seen = engine->seen;
  const auto tried = static_cast<size_t>(run.result.tried);
  if (seen.size() < 1 + tried) {
    ADD_FAILURE() << "the engine saw " << seen.size() << " cases, " << tried << " were tried";
    return run;
  }
  run.candidates.assign(seen.begin() + 1, seen.begin() + 1 + static_cast<ptrdiff_t>(tried));
  return run;
}

// The values one field takes among the candidates tried, in order, leaving
// out the candidates that keep the input's value.
std::vector<int64_t> ValuesTried(const ScriptedRun& run, int64_t Config::*field, int64_t input) {
  std::vector<int64_t> out;
  for (const Case& c : run.candidates) {
    if (c.config.*field != input) out.push_back(c.config.*field);
  }
  return out;
}

// One round of candidates: only the input fails, so none is accepted.
ScriptedRun OnlyInputFails(const Case& input) {
  MinimizeOptions options;
  options.max_evaluations = 10000;  // a candidate equal to the input would loop
  ScriptedRun run = MinimizeScripted(
      input, std::make_shared<ScriptedEngine>([input](const Case& c) { return c == input; }),
      options);
  EXPECT_EQ(run.result.accepted, 0);
  EXPECT_FALSE(run.result.budget_exhausted);
  return run;
}

Case SmallCase(int64_t dp, const std::string& tokens, int64_t max_num_batched_tokens = 8) {
  return ParseCase("r3case 1\ndp " + std::to_string(dp) +
                       "\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens " +
                       std::to_string(max_num_batched_tokens) +
                       "\ntop_k 1\nnum_experts 1\nnum_layers 1\ntokens " + tokens + "\n",
                   "test");
}

TEST(MinimizeTest, FewerDpRanksAreTriedAsPrefixesThenSuffixesThenOneRankAtATime) {
  using Tokens = std::vector<std::vector<int64_t>>;
  for (const auto& [input, expected] :
       {std::pair{SmallCase(/*dp=*/3, "1 2 3"),
                  Tokens{{1}, {3}, {1, 2}, {2, 3}, /*drop 0*/ {2, 3}, {1, 3}, {1, 2}}},
        std::pair{SmallCase(/*dp=*/2, "1 2"), Tokens{{1}, {2}, /*drop 0*/ {2}, {1}}}}) {
    SCOPED_TRACE(PrintCase(input));
    const ScriptedRun run = OnlyInputFails(input);
    ASSERT_TRUE(run.result.input_fails);
    EXPECT_EQ(run.result.accepted, 0);
    Tokens got;
    for (const Case& c : run.candidates) {
      if (c.config.dp == input.config.dp) continue;
      EXPECT_EQ(c.config.dp, static_cast<int64_t>(c.step.tokens.size()));
      got.push_back(c.step.tokens);
    }
    EXPECT_EQ(got, expected);
  }
}

// Ladder: the lowest value, then halving the distance (a binary search when
// the failure is monotone), ranges of at most 16 exhaustively.
TEST(MinimizeTest, SmallerMIsTriedClampedByHalvingThenAloneDownToTheLargestCount) {
  const Case input = SmallCase(/*dp=*/2, "40 50", /*max_num_batched_tokens=*/64);
  const ScriptedRun run = OnlyInputFails(input);
  ASSERT_TRUE(run.result.input_fails);
  std::vector<std::pair<int64_t, std::vector<int64_t>>> got;
  for (const Case& c : run.candidates) {
    if (c.config.max_num_batched_tokens == 64) continue;
    EXPECT_EQ(c.step.padded, c.step.tokens);
    got.emplace_back(c.config.max_num_batched_tokens, c.step.tokens);
  }
  std::vector<std::pair<int64_t, std::vector<int64_t>>> expected = {
      // M with every count clamped to it: 1, 64 - 63/2, 64 - 63/4, ..., 63
      {1, {1, 1}},
      {33, {33, 33}},
      {49, {40, 49}},
      {57, {40, 50}},
      {61, {40, 50}},
      {63, {40, 50}},
  };
  // M alone, from the largest count up (14 values: exhaustive).
  for (int64_t m = 50; m < 64; ++m) expected.push_back({m, {40, 50}});
  EXPECT_EQ(got, expected);
}

// With no rows at all, M alone goes down to 1 like the clamped M.
TEST(MinimizeTest, SmallerMAloneStartsAtOneForAnEmptyStep) {
  const Case input = SmallCase(/*dp=*/2, "0 0", /*max_num_batched_tokens=*/64);
  const ScriptedRun run = OnlyInputFails(input);
  ASSERT_TRUE(run.result.input_fails);
  EXPECT_EQ(ValuesTried(run, &Config::max_num_batched_tokens, 64), (std::vector<int64_t>{/*clamped*/ 1, 33, 49, 57, 61, 63,
                                       /*alone*/ 1, 33, 49, 57, 61, 63}));
}

// Per DP rank: padding and tokens down together (tokens <= padded), then
// padding alone down to the tokens, then the step without padding.
TEST(MinimizeTest, StepCountsShrinkBothThenPaddingAloneThenPaddingDropped) {
  Case input = SmallCase(/*dp=*/1, "2");
  input.step.padded = {6};
  const ScriptedRun run = OnlyInputFails(input);
  ASSERT_TRUE(run.result.input_fails);
  std::vector<std::pair<int64_t, int64_t>> got;  // (tokens, padded)
  for (const Case& c : run.candidates) {
    if (c.config.max_num_batched_tokens == 8) got.emplace_back(c.step.tokens[0], c.step.padded[0]);
  }
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, int64_t>>{
                     {0, 0}, {1, 1}, {2, 2}, {2, 3}, {2, 4}, {2, 5},  // both
                     {2, 2}, {2, 3}, {2, 4}, {2, 5},                  // padding alone
                     {6, 6}}));                                       // no padding
}

// Ranges of at most 16 values are tried exhaustively, longer ones by halving.
TEST(MinimizeTest, LaddersAreExhaustiveUpToSixteenValues) {
  const Case input = ParseCase(
      "r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 1\nnum_experts 18\nnum_layers 17\ntokens 1\n",
      "test");
  const ScriptedRun run = OnlyInputFails(input);
  ASSERT_TRUE(run.result.input_fails);
  EXPECT_EQ(ValuesTried(run, &Config::num_layers, 17),
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
  EXPECT_EQ(ValuesTried(run, &Config::num_experts, 18), (std::vector<int64_t>{1, 10, 14, 16, 17}));
}

TEST(MinimizeTest, FewerDpRanksHalveTheDistanceDownToOne) {
  std::string tokens;
  for (int d = 0; d < 20; ++d) tokens += "1 ";
  const ScriptedRun run = OnlyInputFails(SmallCase(/*dp=*/20, tokens));
  ASSERT_TRUE(run.result.input_fails);
  std::vector<int64_t> expected = {1, 1, 11, 11, 16, 16, 18, 18, 19, 19};  // prefix, suffix
  expected.resize(expected.size() + 20, 19);                               // one rank dropped
  EXPECT_EQ(ValuesTried(run, &Config::dp, 20), expected);
}

// When the failure needs none of the case, every field goes to its
// simplest value: the candidates reach each of them.
TEST(MinimizeTest, EveryFieldShrinksToItsSimplestWhenTheFailureNeedsNone) {
  Case input = ParseCase(
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch internal\nsp on\nmax_num_batched_tokens 64\n"
      "top_k 4\nnum_experts 8\nnum_layers 3\ntokens 5 3\npadded 8 4\n",
      "test");
  MinimizeOptions options;
  options.max_evaluations = 10000;
  const ScriptedRun run = MinimizeScripted(
      input, std::make_shared<ScriptedEngine>([](const Case&) { return true; }), options);
  ASSERT_TRUE(run.result.input_fails);
  EXPECT_FALSE(run.result.budget_exhausted);
  EXPECT_EQ(PrintCase(run.result.minimal),
            "r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 1\n"
            "top_k 1\nnum_experts 1\nnum_layers 1\ntokens 0\n");
}

// SP off is simpler than SP on, and auto is the canonical spelling only where
// it leaves SP off: a failure that needs DP 2, TP 2 and EP (where auto turns
// SP on) but not SP ends with SP off, from any spelling, without cycling
// between off and auto.
TEST(MinimizeTest, SpEndsOffWhereAutoWouldTurnItOn) {
  for (const char* sp : {"on", "auto", "off"}) {
    SCOPED_TRACE(sp);
    const Case input = ParseCase(
        "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp " + std::string(sp) +
            "\nmax_num_batched_tokens 4\ntop_k 1\nnum_experts 1\nnum_layers 1\ntokens 1 1\n",
        "test");
    MinimizeOptions options;
    options.max_evaluations = 10000;
    const ScriptedRun run =
        MinimizeScripted(input, std::make_shared<ScriptedEngine>([](const Case& c) {
                           return c.config.dp == 2 && c.config.tp == 2 && c.config.ep;
                         }),
                         options);
    ASSERT_TRUE(run.result.input_fails);
    EXPECT_FALSE(run.result.budget_exhausted);
    EXPECT_EQ(run.result.minimal.config.sp, SpMode::kOff);
  }
}

// A candidate the engine cannot run is not the same failure.
TEST(MinimizeTest, ACandidateTheEngineCannotRunIsNotTaken) {
  const Case input = SmallCase(/*dp=*/2, "1 1");
  const ScriptedRun run =
      MinimizeScripted(input, std::make_shared<ScriptedEngine>(
                                  /*fails=*/[](const Case&) { return true; }, /*differs=*/nullptr,
                                  /*breaks=*/[](const Case& c) { return c.config.dp == 1; }));
  ASSERT_TRUE(run.result.input_fails);
  EXPECT_EQ(run.result.minimal.config.dp, 2);
  // ... and it is said, so that a producer that fails is never silent.
  EXPECT_GT(run.result.unrunnable, 0);
  EXPECT_EQ(run.result.first_unrunnable, "the engine died");
  const std::string text = MinimizedText(run.result, NamedEngine());
  EXPECT_NE(text.find("\n# " + std::to_string(run.result.unrunnable) +
                      " candidate(s) could not be run under this SUT and were not taken; the "
                      "first: the engine died\n"),
            std::string::npos)
      << text;
}

// A run where every candidate runs says nothing of the kind.
TEST(MinimizeTest, NoUnrunnableLineWhenEveryCandidateRan) {
  const ScriptedRun run = OnlyInputFails(SmallCase(/*dp=*/2, "1 1"));
  EXPECT_EQ(run.result.unrunnable, 0);
  EXPECT_EQ(MinimizedText(run.result, NamedEngine()).find("could not be run"), std::string::npos);
}

TEST(MinimizeTest, TpAndTopKLaddersHalveTheDistanceDownToOne) {
  const Case input = ParseCase(
      "r3case 1\ndp 1\ntp 32\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 32\nnum_experts 32\nnum_layers 1\ntokens 1\n",
      "test");
  const ScriptedRun run = OnlyInputFails(input);
  ASSERT_TRUE(run.result.input_fails);
  EXPECT_EQ(ValuesTried(run, &Config::tp, 32), (std::vector<int64_t>{1, 17, 25, 29, 31}));
  EXPECT_EQ(ValuesTried(run, &Config::top_k, 32), (std::vector<int64_t>{1, 17, 25, 29, 31}));
}

// SP forced on: dropping to one DP rank or to TP 1, or turning EP off, gives
// cases that cannot exist. They are not candidates the engine is asked about,
// nor do they count as tried.
TEST(MinimizeTest, TheEngineIsNeverHandedAnInvalidCandidate) {
  const Case input = ParseCase(
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp on\nmax_num_batched_tokens 8\n"
      "top_k 1\nnum_experts 2\nnum_layers 1\ntokens 3 2\n",
      "test");
  auto engine = std::make_shared<ScriptedEngine>([](const Case& c) { return c.config.dp == 2; });
  const ScriptedRun run = MinimizeScripted(input, engine);
  ASSERT_TRUE(run.result.input_fails);
  EXPECT_GT(run.result.accepted, 0);
  for (const Case& c : engine->seen) EXPECT_EQ(ValidateCase(c).field, "") << PrintCase(c);
  EXPECT_EQ(run.result.minimal.config.dp, 2);
}

TEST(MinimizeTest, EvaluationBudgetStopsInTheMiddleOfARound) {
  const Case input = SmallCase(/*dp=*/3, "1 2 3");
  auto engine = std::make_shared<ScriptedEngine>([input](const Case& c) { return c == input; });
  MinimizeOptions options;
  options.max_evaluations = 2;
  const ScriptedRun run = MinimizeScripted(input, engine, options);
  EXPECT_TRUE(run.result.budget_exhausted);
  EXPECT_EQ(run.result.tried, 2);
  EXPECT_EQ(run.result.minimal, input);
  EXPECT_NE(MinimizedText(run.result, *options.producer).find("(2 candidates tried); budget exhausted"),
            std::string::npos);
}

TEST(MinimizeTest, AnExhaustedBudgetCutsTheFieldReportShort) {
  // On a large case the field report's probes cost more than the shrinking;
  // with the budget spent it must not run them all (minimize --budget-ms
  // bounds the whole run), and the header says the report is partial.
  const Case input = SmallCase(/*dp=*/3, "1 2 3");
  auto engine = std::make_shared<ScriptedEngine>([input](const Case& c) { return c == input; });
  MinimizeOptions options;
  options.max_evaluations = 2;
  const ScriptedRun run = MinimizeScripted(input, engine, options);
  ASSERT_TRUE(run.result.budget_exhausted);
  EXPECT_EQ(engine->seen.size(), 1u + 2u) << "the input, the 2 candidates, and no probe";
  EXPECT_TRUE(run.result.fields.empty());
  EXPECT_FALSE(run.result.fields_complete);
  EXPECT_NE(MinimizedText(run.result, *options.producer)
                .find("# Field report cut short by the budget: fields not listed below were not "
                      "probed.\n"),
            std::string::npos);
}

// The "alternative -> outcome" line the header prints for `field`.
std::string DependsLine(const std::string& text, const std::string& field) {
  const std::string key = "\n#   " + field + " = ";
  const size_t at = text.find(key);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

// A case where only the input fails: every alternative passes, except one
// more DP rank (a capturer-holds failure instead) and one more token on DP
// rank 0 (the engine dies on it).
struct ProbedCase {
  MinimizeResult result;
  std::string text;
};

// The minimizer's result and header for an input that only the input fails
// (so it comes back unchanged), probed through `engine`.
ProbedCase ProbeUnshrinkable(const Case& input, std::shared_ptr<ScriptedEngine> engine) {
  const ScriptedRun run = MinimizeScripted(input, engine);
  EXPECT_TRUE(run.result.input_fails);
  EXPECT_EQ(run.result.minimal, input);
  return {run.result, MinimizedText(run.result, *engine)};
}

ProbedCase ProbeEveryField() {
  const Case input = ParseCase(
      "r3case 1\ndp 3\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 1\nnum_experts 5\nnum_layers 3\ntokens 1 1 1\n",
      "test");
  auto engine = std::make_shared<ScriptedEngine>(
      /*fails=*/[input](const Case& c) { return c == input; },
      /*differs=*/[](const Case& c) { return c.config.dp == 4; },
      /*breaks=*/[](const Case& c) { return c.step.tokens[0] == 2; });
  return ProbeUnshrinkable(input, engine);
}

TEST(MinimizeTest, AFinishedRunReportsEveryField) {
  const ProbedCase probed = ProbeEveryField();
  EXPECT_TRUE(probed.result.fields_complete);
  EXPECT_EQ(probed.text.find("cut short"), std::string::npos);
}

TEST(MinimizeTest, FieldAlternativesAreOneLessOneMoreAndDouble) {
  const ProbedCase probed = ProbeEveryField();
  EXPECT_EQ(DependsLine(probed.text, "max_num_batched_tokens"),
            "#   max_num_batched_tokens = 8: 7 -> passes; 9 -> passes; 16 -> passes")
      << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "num_experts"),
            "#   num_experts = 5: 4 -> passes; 6 -> passes; 10 -> passes")
      << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "num_layers"), "#   num_layers = 3: 2 -> passes; 4 -> passes")
      << probed.text;
  // tp 0 and top_k 0 are not cases; tp 2 is both one more and double.
  EXPECT_EQ(DependsLine(probed.text, "tp"), "#   tp = 1: 2 -> passes") << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "top_k"), "#   top_k = 1: 2 -> passes") << probed.text;
}

TEST(MinimizeTest, DpAlternativesAreOneRankFewerAndACopyOfTheLastRankMore) {
  const ProbedCase probed = ProbeEveryField();
  EXPECT_EQ(DependsLine(probed.text, "dp"),
            "#   dp = 3: 2 -> passes; 4 -> fails differently (2 capturer-holds)")
      << probed.text;
  for (const FieldReport& f : probed.result.fields) {
    if (f.field != "dp") continue;
    ASSERT_EQ(f.probes.size(), 2u);
    EXPECT_EQ(f.probes[1].outcome, "fails differently (2 capturer-holds)");
    EXPECT_FALSE(f.probes[1].same);
  }
}

// tokens[0] = 2 is an alternative the engine cannot run: no outcome is
// claimed for it.
TEST(MinimizeTest, AnAlternativeTheEngineCannotRunIsLeftOutOfTheReport) {
  const ProbedCase probed = ProbeEveryField();
  EXPECT_EQ(DependsLine(probed.text, "tokens[0]"), "#   tokens[0] = 1: 0 -> passes") << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "tokens[1]"), "#   tokens[1] = 1: 0 -> passes; 2 -> passes")
      << probed.text;
}

// A case whose count fields all differ from their neighbours: TP 3, top_k 3,
// and padding on DP rank 1, so each alternative's value says which
// arithmetic made it. Only the input fails; dropping DP rank 1 (not DP rank
// 0) fails differently.
ProbedCase ProbeCountFields() {
  const Case input = ParseCase(
      "r3case 1\ndp 2\ntp 3\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 3\nnum_experts 8\nnum_layers 1\ntokens 1 2\npadded 1 4\n",
      "test");
  auto engine = std::make_shared<ScriptedEngine>(
      /*fails=*/[input](const Case& c) { return c == input; },
      /*differs=*/[](const Case& c) {
        return c.step.tokens == std::vector<int64_t>{1} && c.step.padded == std::vector<int64_t>{1};
      });
  return ProbeUnshrinkable(input, engine);
}

TEST(MinimizeTest, CountAlternativesAreOneLessOneMoreAndDoubleOfTheMinimalValue) {
  const ProbedCase probed = ProbeCountFields();
  EXPECT_EQ(DependsLine(probed.text, "dp"),
            "#   dp = 2: 1 -> fails differently (2 capturer-holds); 3 -> passes")
      << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "tp"), "#   tp = 3: 2 -> passes; 4 -> passes; 6 -> passes")
      << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "top_k"), "#   top_k = 3: 2 -> passes; 4 -> passes")
      << probed.text;
}

// tokens[d] and padded[d] each report their own value; padded 0 on DP rank 0
// would be less than its tokens, so it is not an alternative.
TEST(MinimizeTest, TokensAndPaddingAreProbedAndReportedSeparately) {
  const ProbedCase probed = ProbeCountFields();
  EXPECT_EQ(DependsLine(probed.text, "tokens[0]"), "#   tokens[0] = 1: 0 -> passes; 2 -> passes")
      << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "padded[0]"), "#   padded[0] = 1: 2 -> passes")
      << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "tokens[1]"), "#   tokens[1] = 2: 1 -> passes; 3 -> passes")
      << probed.text;
  EXPECT_EQ(DependsLine(probed.text, "padded[1]"), "#   padded[1] = 4: 3 -> passes; 5 -> passes")
      << probed.text;
  EXPECT_NE(probed.text.find("# Fields that can vary without changing the failure: none\n"),
            std::string::npos)
      << probed.text;
}

// When every alternative keeps the failure, every field is free and none is
// listed as one the failure depends on.
TEST(MinimizeTest, FreeFieldsAreListedOnceAndNotAsDependencies) {
  const Case input = SmallCase(/*dp=*/2, "1 1");
  MinimizeOptions options;
  options.max_evaluations = 10000;
  auto engine = std::make_shared<ScriptedEngine>([](const Case&) { return true; });
  const ScriptedRun run = MinimizeScripted(input, engine, options);
  ASSERT_TRUE(run.result.input_fails);
  const std::string text = MinimizedText(run.result, *engine);
  // top_k 1 of 1 expert has no valid alternative, so it is not a field here.
  EXPECT_NE(text.find("# Fields that can vary without changing the failure: dp tp ep dispatch sp "
                      "max_num_batched_tokens num_experts num_layers tokens[0] padded[0]\n"
                      "# Fields the failure depends on (alternative -> outcome):\nr3case 1\n"),
            std::string::npos)
      << text;
}

TEST(MinimizeTest, TheResultKeepsTheInputCase) {
  const Case input = SmallCase(/*dp=*/2, "1 2");
  const ScriptedRun failing = MinimizeScripted(
      input, std::make_shared<ScriptedEngine>([](const Case&) { return true; }));
  EXPECT_EQ(failing.result.original, input);
  EXPECT_NE(failing.result.minimal, input);
  const ScriptedRun passing = MinimizeScripted(
      input, std::make_shared<ScriptedEngine>([](const Case&) { return false; }));
  EXPECT_FALSE(passing.result.input_fails);
  EXPECT_EQ(passing.result.original, input);
}

// A field whose probes the wall-clock budget interrupts is reported with the
// alternatives it did probe. The engine stalls on TP 3 (only a probe goes up
// from TP 2) until the budget is spent, so TP 4 is never probed.
TEST(MinimizeTest, AFieldCutShortByTheClockKeepsTheProbesItRan) {
  const Case input = ParseCase(
      "r3case 1\ndp 1\ntp 2\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 1\nnum_experts 1\nnum_layers 1\ntokens 1\n",
      "test");
  MinimizeOptions options;
  options.budget_ms = 1500;
  std::optional<std::chrono::steady_clock::time_point> first_seen;
  auto engine = std::make_shared<ScriptedEngine>(
      /*fails=*/[input](const Case& c) { return c == input; }, /*differs=*/nullptr,
      /*breaks=*/[&](const Case& c) {
        const auto now = std::chrono::steady_clock::now();
        if (!first_seen) first_seen = now;  // the input, just before the clock starts
        if (c.config.tp == 3) {
          std::this_thread::sleep_until(*first_seen + std::chrono::milliseconds(options.budget_ms) +
                                        std::chrono::milliseconds(300));
        }
        return false;
      });
  const ScriptedRun run = MinimizeScripted(input, engine, options);
  ASSERT_TRUE(run.result.input_fails);
  ASSERT_FALSE(run.result.budget_exhausted) << "the shrinking itself ran out of time";
  EXPECT_FALSE(run.result.fields_complete);
  ASSERT_EQ(run.result.fields.size(), 2u);
  EXPECT_EQ(run.result.fields[0].field, "dp");
  const FieldReport& tp = run.result.fields[1];
  EXPECT_EQ(tp.field, "tp");
  ASSERT_EQ(tp.probes.size(), 2u);
  EXPECT_EQ(tp.probes[0].value, "1");
  EXPECT_EQ(tp.probes[1].value, "3");
}

// Every character outside [A-Za-z0-9._-] becomes '-', the ones next to each
// range included.
TEST(MinimizeTest, DefaultRegressionNameKeepsExactlyTheSafeCharacters) {
  class IdEngine : public NamedEngine {
   public:
    std::string Id() const override { return "azAZ09-_.`{@[/:"; }
  };
  MinimizeResult r;
  r.kept = {Invariant::kRowsExact};
  EXPECT_EQ(DefaultRegressionName(r, IdEngine()), "azAZ09-_.-------pr50874-inv3");
}

}  // namespace
}  // namespace r3::minimize
