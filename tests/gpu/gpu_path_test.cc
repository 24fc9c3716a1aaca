// The GPU capture path on a fixed set of cases: the corpus, the pinned
// findings, NCCL-sized cases, CUDA-graph replays and the mutants. This is
// also the binary the compute-sanitizer setups run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>

#include "r3/case/case_format.h"
#include "r3/check/run_case.h"
#include "r3/gpu/gpu.h"
#include "r3/check/report.h"
#include "r3/minimize/minimize.h"
#include "r3/sample/case_sampler.h"
#include "r3/sut/mutants.h"
#include "r3check_config.h"
#include "gpu_testing.h"

namespace r3::gpu {
namespace {

using testing::CorpusFiles;
using testing::GpuCaseResult;
using testing::RunOnGpu;
using testing::DiffAgainstHost;
using testing::ViolatedInvariants;

Case FromText(const std::string& body) { return ParseCase("r3case 1\n" + body, "test"); }

// DP2/TP1: ragged sizes (grouped broadcasts) and equal sizes (ncclAllGather),
// small enough to run one rank per GPU on two GPUs.
Case Dp2Ragged() {
  return FromText(
      "dp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\ntop_k 4\n"
      "num_experts 256\nnum_layers 3\ntokens 5 3\n");
}
Case Dp2Equal() {
  return FromText(
      "dp 2\ntp 1\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 64\ntop_k 4\n"
      "num_experts 256\nnum_layers 2\ntokens 5 3\npadded 8 8\n");
}
Case Dp2IdleRank() {
  return FromText(
      "dp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 16\ntop_k 2\n"
      "num_experts 64\nnum_layers 1\ntokens 0 4\n");
}
Case Tp2NoDp() {
  return FromText(
      "dp 1\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 16\ntop_k 2\n"
      "num_experts 64\nnum_layers 2\ntokens 7\n");
}

// A real model's shape: top_k 8 (two 4-wide groups per row), 48 layers,
// and a capture of 5 rows (a partial tile of 4). `top_k` 6 takes the
// scalar copy.
Case RealModelShape(int top_k = 8) {
  return FromText("dp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 16\n"
                  "top_k " + std::to_string(top_k) +
                  "\nnum_experts 256\nnum_layers 48\ntokens 5\n");
}

std::vector<Case> NcclCases() { return {Dp2Ragged(), Dp2Equal(), Dp2IdleRank(), Tp2NoDp()}; }

GpuOptions Options(RankMode mode, sut::MutantSet mutants = {}) {
  GpuOptions o;
  o.mode = mode;
  o.sut.mutants = mutants;
  return o;
}

void ExpectMatchesHost(const GpuCaseResult& r, const Case& c, const sut::SutOptions& sut,
                       const std::string& name) {
  const check::CaseResult host = check::RunCase(c, sut);
  EXPECT_EQ(ViolatedInvariants(r.result.verdict), ViolatedInvariants(host.verdict)) << name;
  EXPECT_EQ(DiffAgainstHost(r), "") << name;
  EXPECT_EQ(r.Passes(), host.PassesOrKnown()) << name << "\n" << r.Summary();
}

TEST(GpuPathTest, CorpusSeedsPassWithEmulatedRanks) {
  Runner runner(Options(RankMode::kEmulated));
  for (const std::string& path : CorpusFiles("seeds")) {
    const Case c = LoadCaseFile(path);
    const GpuCaseResult r = RunOnGpu(runner, c);
    EXPECT_TRUE(r.Passes()) << path << "\n" << r.Summary();
    EXPECT_EQ(r.wrong_values, 0) << path << "\n" << r.Summary();
    EXPECT_GT(r.values_checked, 0) << path;
    ExpectMatchesHost(r, c, {}, path);
  }
}

TEST(GpuPathTest, FindingsReproduceOnTheGpu) {
  Runner runner(Options(RankMode::kEmulated));
  for (const std::string& path : CorpusFiles("findings")) {
    const Case c = LoadCaseFile(path);
    const GpuCaseResult r = RunOnGpu(runner, c);
    EXPECT_FALSE(r.result.verdict.ok()) << path;
    EXPECT_TRUE(r.result.PassesOrKnown()) << path << "\n" << r.Summary();
    ExpectMatchesHost(r, c, {}, path);
  }
}

TEST(GpuPathTest, SpecExampleRowsAreDecodedFromRealData) {
  Runner runner(Options(RankMode::kEmulated));
  const GpuCaseResult r = RunOnGpu(runner, LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) +
                                                  "/seeds/tp2-dp2-eager.r3case"));
  // Spec section 7: n = 10 gathered rows; DP1 takes rows [6, 9).
  const sut::RankObservation& dp1 = r.result.observation.ranks[2];
  EXPECT_EQ(dp1.n, 10);
  EXPECT_EQ(dp1.branch, sut::Branch::kEpSpShards);
  EXPECT_EQ(dp1.captured, (RowRuns{{1, 0, 3}}));
  EXPECT_EQ(r.result.observation.ranks[0].captured, (RowRuns{{0, 0, 5}}));
}

TEST(GpuPathTest, InternalSpGathersOverTheTpGroup) {
  Runner runner(Options(RankMode::kEmulated));
  const GpuCaseResult r = RunOnGpu(runner, LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) +
                                                  "/seeds/tp2-dp2-internal-sp.r3case"));
  bool gathered = false;
  for (const sut::RankObservation& rank : r.result.observation.ranks) {
    gathered = gathered || rank.branch == sut::Branch::kSpTpGather;
  }
  EXPECT_TRUE(gathered);
  EXPECT_TRUE(r.Passes()) << r.Summary();
}

TEST(GpuPathTest, OneRankPerGpuWithNcclWhenTheRanksFit) {
  Runner runner(Options(RankMode::kAuto));
  for (const Case& c : NcclCases()) {
    const GpuCaseResult r = RunOnGpu(runner, c);
    if (runner.devices() >= 2) {
      EXPECT_EQ(r.mode.rfind("nccl", 0), 0u) << r.mode;
    }
    EXPECT_TRUE(r.Passes()) << PrintCase(c) << r.Summary();
    EXPECT_EQ(r.wrong_values, 0) << r.Summary();
    ExpectMatchesHost(r, c, {}, PrintCase(c));
  }
}

// More ranks than GPUs: ranks go round-robin, the collectives run over a
// communicator of the distinct GPUs (TP2/DP2 on 2 GPUs: every TP group and
// the EP group cross the GPUs).
TEST(GpuPathTest, CorpusSeedsPassWithRanksSpreadOverTheGpus) {
  Runner runner(Options(RankMode::kAuto));
  for (const std::string& path : CorpusFiles("seeds")) {
    const Case c = LoadCaseFile(path);
    const GpuCaseResult r = RunOnGpu(runner, c);
    if (runner.devices() >= 2 && c.config.dp * c.config.tp >= 2) {
      EXPECT_EQ(r.mode.rfind("nccl", 0), 0u) << r.mode;
    }
    EXPECT_TRUE(r.Passes()) << path << "\n" << r.Summary();
    EXPECT_EQ(r.wrong_values, 0) << path << "\n" << r.Summary();
    ExpectMatchesHost(r, c, {}, path);
  }
}

TEST(GpuPathTest, BatchesGiveTheSameResultsAsSingleRuns) {
  Runner runner(Options(RankMode::kAuto));
  std::vector<Case> cases = NcclCases();
  for (const std::string& path : CorpusFiles("seeds")) cases.push_back(LoadCaseFile(path));
  const std::vector<GpuCaseResult> batch = RunOnGpu(runner, cases);
  ASSERT_EQ(batch.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const GpuCaseResult one = RunOnGpu(runner, cases[i]);
    EXPECT_EQ(batch[i].Summary(), one.Summary());
    EXPECT_TRUE(batch[i].Passes()) << batch[i].Summary();
  }
}

TEST(GpuPathTest, CudaGraphReplaysAreEachChecked) {
  GpuOptions o = Options(RankMode::kEmulated);
  o.graph = true;
  o.graph_replays = 3;
  Runner runner(o);
  std::vector<Case> cases = NcclCases();
  for (const std::string& path : CorpusFiles("seeds")) cases.push_back(LoadCaseFile(path));
  for (const Case& c : cases) {
    const GpuCaseResult r = RunOnGpu(runner, c);
    EXPECT_EQ(r.steps, 3);
    EXPECT_NE(r.mode.find("graph"), std::string::npos);
    EXPECT_TRUE(r.Passes()) << PrintCase(c) << r.Summary();
    EXPECT_EQ(r.wrong_values, 0);
  }
}

// Graph mode on real ranks: each GPU's step, NCCL all-gathers included,
// captured as one graph per GPU and replayed with fresh data, every replay
// judged; the same verdicts as emulated graphs and as the host, and a GPU
// data-movement mutant still caught inside the graphs.
TEST(GpuPathTest, CudaGraphsWithNcclOnTwoGpusAreEachChecked) {
  GpuOptions o = Options(RankMode::kAuto);
  o.graph = true;
  o.graph_replays = 3;
  Runner runner(o);
  if (runner.devices() < 2) {
    GTEST_SKIP() << "needs 2 GPUs (NCCL puts one rank of a communicator per GPU); "
                 << runner.devices() << " visible";
  }
  std::vector<Case> cases = NcclCases();
  for (const std::string& path : CorpusFiles("seeds")) cases.push_back(LoadCaseFile(path));
  for (const Case& c : cases) {
    const GpuCaseResult r = RunOnGpu(runner, c);
    EXPECT_EQ(r.steps, 3);
    if (c.config.dp * c.config.tp >= 2) {
      EXPECT_EQ(r.mode.rfind("nccl on 2 GPUs", 0), 0u) << r.mode;
      EXPECT_NE(r.mode.find("graph"), std::string::npos) << r.mode;
    }
    EXPECT_TRUE(r.Passes()) << PrintCase(c) << r.Summary();
    EXPECT_EQ(r.wrong_values, 0) << r.Summary();
    ExpectMatchesHost(r, c, {}, PrintCase(c));
  }
  GpuOptions broken = o;
  broken.sut.mutants = sut::MutantSet(sut::MutantNamed("gpu-gather-reversed"));
  Runner mutant(broken);
  const GpuCaseResult r = RunOnGpu(mutant, Dp2Ragged());
  EXPECT_EQ(r.mode.rfind("nccl on 2 GPUs", 0), 0u) << r.mode;
  EXPECT_FALSE(r.Passes()) << r.Summary();
  EXPECT_GT(r.wrong_values, 0);
}

TEST(GpuPathTest, TooSmallReplayBufferIsAnErrorNotAWrite) {
  GpuOptions o = Options(RankMode::kEmulated);
  o.sut.policy = sut::Policy::kLegacy;
  Runner runner(o);
  const Case c =
      LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds/tp2-dp2-warmup.r3case");
  const GpuCaseResult r = RunOnGpu(runner, c);
  EXPECT_TRUE(r.result.verdict.Violates(check::Invariant::kReplayFits));
  EXPECT_NE(r.result.observation.ranks[0].replay_error.find("ValueError"), std::string::npos);
  ExpectMatchesHost(r, c, o.sut, "legacy warmup");
}

// The smallest cases that show three GPU-only mutants, each the least a
// case can hold and still show its bug (pinned from a run on an H200; the
// minimizer is deterministic): one row, whose partial tile of 4 the tail
// bug drops; two rows in two layers, the least a wrong row stride can
// misplace; two DP ranks of one row each, whose order a reversed all-gather
// swaps, with 3 experts so that the two rows' fills differ.
constexpr const char* kSmallestTailRows =
    "r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 1\n"
    "top_k 1\nnum_experts 1\nnum_layers 1\ntokens 1\n";
constexpr const char* kSmallestLayerStride =
    "r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 2\n"
    "top_k 1\nnum_experts 1\nnum_layers 2\ntokens 2\n";
constexpr const char* kSmallestGatherReversed =
    "r3case 1\ndp 2\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 1\n"
    "top_k 1\nnum_experts 3\nnum_layers 1\ntokens 1 1\n";

// A mutant the host SUT ignores must pass on the host and fail on the GPU.
void ExpectGpuOnlyKill(sut::Mutant m, RankMode mode, const Case& c) {
  const sut::MutantSet mutants(m);
  const sut::SutOptions host_options{.mutants = mutants};
  EXPECT_TRUE(check::RunCase(c, host_options).PassesOrKnown());
  Runner runner(Options(mode, mutants));
  const GpuCaseResult r = RunOnGpu(runner, c);
  EXPECT_FALSE(r.Passes()) << sut::GetMutantInfo(m).name << " " << r.mode << "\n" << r.Summary();
  EXPECT_GT(r.wrong_values, 0);
}

TEST(GpuPathTest, GpuOnlyMutantsAreCaught) {
  for (const RankMode mode : {RankMode::kEmulated, RankMode::kAuto}) {
    ExpectGpuOnlyKill(sut::MutantNamed("gpu-layer-stride"), mode, Dp2Ragged());
    ExpectGpuOnlyKill(sut::MutantNamed("gpu-gather-reversed"), mode, Dp2Ragged());
    ExpectGpuOnlyKill(sut::MutantNamed("gpu-gather-reversed"), mode, Dp2Equal());
  }
  ExpectGpuOnlyKill(sut::MutantNamed("gpu-gather-reversed"), RankMode::kEmulated,
                    LoadCaseFile(std::string(R3CHECK_SOURCE_CORPUS) +
                                 "/seeds/tp2-dp2-eager.r3case"));
  ExpectGpuOnlyKill(sut::MutantNamed("gpu-vec-groups"), RankMode::kEmulated, RealModelShape());
  ExpectGpuOnlyKill(sut::MutantNamed("gpu-tail-rows"), RankMode::kEmulated, RealModelShape());
  ExpectGpuOnlyKill(sut::MutantNamed("gpu-tail-rows"), RankMode::kEmulated, RealModelShape(6));
}

// A failure only the GPU shows shrinks on the GPU: the minimizer drives the
// runner like any producer. The smallest case still fails there, with the
// same invariant, and passes on the host, where the mutant changes nothing.
TEST(GpuPathTest, MinimizeShrinksAGpuOnlyFailureOnTheGpu) {
  struct Shrink {
    sut::Mutant mutant;
    Case input;
    std::string smallest;  // PrintCase of the known smallest case
  };
  const std::vector<Shrink> shrinks = {
      {sut::MutantNamed("gpu-tail-rows"), RealModelShape(6), kSmallestTailRows},
      {sut::MutantNamed("gpu-layer-stride"), Dp2Ragged(), kSmallestLayerStride},
      {sut::MutantNamed("gpu-gather-reversed"), Dp2Ragged(), kSmallestGatherReversed},
  };
  for (const Shrink& s : shrinks) {
    const std::string name(sut::GetMutantInfo(s.mutant).name);
    minimize::MinimizeOptions options;
    options.producer =
        std::make_shared<Runner>(Options(RankMode::kEmulated, sut::MutantSet(s.mutant)));
    options.budget_ms = 120000;
    const minimize::MinimizeResult r = minimize::Minimize(s.input, options);
    ASSERT_TRUE(r.input_fails) << name;
    EXPECT_FALSE(r.budget_exhausted) << name;
    EXPECT_EQ(r.kept, (std::vector<check::Invariant>{check::Invariant::kRowsExact,
                                                      check::Invariant::kConcatGlobal}))
        << name;
    EXPECT_EQ(PrintCase(r.minimal), s.smallest) << name << ":\n" << PrintCase(r.minimal);
    const GpuCaseResult gpu = RunOnGpu(
        Runner(Options(RankMode::kEmulated, sut::MutantSet(s.mutant))), r.minimal);
    EXPECT_FALSE(gpu.Passes()) << name << "\n" << gpu.Summary();
    EXPECT_TRUE(check::RunCase(r.minimal, {.mutants = sut::MutantSet(s.mutant)}).PassesOrKnown())
        << name;
  }
}

// The kernel mutants hide at the shapes small generators draw: top_k 4 is
// one group per row, 4 rows are one whole tile.
TEST(GpuPathTest, KernelMutantsHideAtSmallShapes) {
  const Case c = FromText(
      "dp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 16\ntop_k 4\n"
      "num_experts 256\nnum_layers 2\ntokens 4\n");
  for (const sut::Mutant m :
       {sut::MutantNamed("gpu-vec-groups"), sut::MutantNamed("gpu-tail-rows")}) {
    const GpuCaseResult r = RunOnGpu(Runner(Options(RankMode::kEmulated, sut::MutantSet(m))), c);
    EXPECT_TRUE(r.Passes()) << sut::GetMutantInfo(m).name << "\n" << r.Summary();
  }
}

TEST(GpuPathTest, RealModelShapesPass) {
  Runner runner(Options(RankMode::kEmulated));
  for (const int top_k : {1, 6, 8, 16}) {
    const GpuCaseResult r = RunOnGpu(runner, RealModelShape(top_k));
    EXPECT_TRUE(r.Passes()) << top_k << "\n" << r.Summary();
    EXPECT_EQ(r.wrong_values, 0);
  }
}

// A rank that skips a collective its group runs hangs its peers on real
// GPUs: the runner aborts the communicators after the timeout and says so.
TEST(GpuPathTest, MismatchedCollectiveIsAnErrorWithinTheTimeout) {
  GpuOptions o =
      Options(RankMode::kAuto, sut::MutantSet(sut::MutantNamed("gpu-skipped-collective")));
  o.timeout_ms = 2000;
  Runner runner(o);
  if (runner.devices() < 2) GTEST_SKIP() << "needs two GPUs";
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  try {
    RunOnGpu(runner, Dp2Ragged());
  } catch (const GpuError& e) {
    error = e.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(error.find("did not finish within 2000 ms"), std::string::npos) << error;
  EXPECT_NE(error.find("communicators aborted"), std::string::npos) << error;
  EXPECT_LT(seconds, 20.0);
  // The GPUs are still usable.
  const GpuCaseResult clean = RunOnGpu(Runner(Options(RankMode::kAuto)), Dp2Ragged());
  EXPECT_TRUE(clean.Passes()) << clean.Summary();
}

TEST(GpuPathTest, SkippedCollectiveIsAnErrorWhenEmulated) {
  Runner runner(
      Options(RankMode::kEmulated, sut::MutantSet(sut::MutantNamed("gpu-skipped-collective"))));
  try {
    RunOnGpu(runner, Dp2Ragged());
    FAIL() << "no error";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("skips the all-gather"), std::string::npos) << e.what();
  }
}

TEST(GpuPathTest, TheUsersNcclSettingIsKept) {
  const std::string saved = std::getenv("NCCL_NVLS_ENABLE") ? std::getenv("NCCL_NVLS_ENABLE") : "";
  setenv("NCCL_NVLS_ENABLE", "00", /*overwrite=*/1);  // still off, but not the library's "0"
  { Runner runner(Options(RankMode::kAuto)); }
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "00");
  setenv("NCCL_NVLS_ENABLE", saved.c_str(), /*overwrite=*/1);
}

// 2^20 capturer rows x 4096 layers x 16 values: 256 GiB, more than an H200.
TEST(GpuPathTest, CudaErrorsNameFileAndLine) {
  GpuOptions o = Options(RankMode::kEmulated);
  o.memory_limit = std::numeric_limits<int64_t>::max();
  Runner runner(o);
  const Case huge = FromText(
      "dp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 1048576\n"
      "top_k 16\nnum_experts 256\nnum_layers 4096\ntokens 1\n");
  try {
    RunOnGpu(runner, huge);
    FAIL() << "no error";
  } catch (const GpuError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CUDA error at src/r3/gpu/"), std::string::npos) << what;
    EXPECT_NE(what.find(".h:"), std::string::npos) << what;
    EXPECT_NE(what.find("cudaMalloc"), std::string::npos) << what;
  }
  // The runner recovers: the next case gets a fresh allocation.
  EXPECT_TRUE(RunOnGpu(runner, Dp2Ragged()).Passes());
}

TEST(GpuPathTest, HostMutantsAreCaughtOnTheGpuAsOnTheHost) {
  std::vector<std::string> paths = CorpusFiles("seeds");
  for (const sut::MutantInfo& info : sut::MutantCatalogue()) {
    if (info.gpu_only) continue;
    const sut::MutantSet mutants(info.id);
    Runner runner(Options(RankMode::kEmulated, mutants));
    int killed = 0;
    for (const std::string& path : paths) {
      const Case c = LoadCaseFile(path);
      const GpuCaseResult r = RunOnGpu(runner, c);
      ExpectMatchesHost(r, c, {.mutants = mutants}, std::string(info.name) + " " + path);
      killed += r.Passes() ? 0 : 1;
    }
    if (info.equivalent) {
      EXPECT_EQ(killed, 0) << info.name;
    } else {
      EXPECT_GT(killed, 0) << info.name << " survives every seed on the GPU";
    }
  }
}

// A failing case comes back as the device judge's summary, its capture
// layer's rows and, for each of them, the row of the step the device's row
// index found: what that decodes to must be what reading every checked value
// back and judging and indexing it on the host gives (a full read back also
// throws when a rank's device summary differs from the host's), and what the
// host's index gives when the device has no memory for row indexes. Sampled
// cases, in batches, under every mutant that leaves wrong values.
TEST(GpuPathTest, TheDeviceSummaryIsWhatTheHostJudgesFromEveryValue) {
  sample::CaseSampler sampler(/*seed=*/5);
  std::vector<Case> cases;
  while (cases.size() < 1200) cases.push_back(sampler.Next());
  int64_t baseline = -1;  // cases with wrong values and no mutant (known findings)
  for (const char* name : {"", "no-sp-trim", "gpu-tail-rows", "gpu-layer-stride",
                           "gpu-vec-groups", "gpu-gather-reversed"}) {
    const sut::MutantSet mutants =
        *name == '\0' ? sut::MutantSet() : sut::MutantSet(sut::MutantNamed(name));
    GpuOptions o = Options(RankMode::kEmulated, mutants);
    Runner summary(o);
    GpuOptions host_index = o;
    host_index.row_index_bytes = 0;
    Runner no_index(host_index);
    o.full_readback = true;
    Runner full(o);
    std::vector<sut::Observation> a = summary.Observe(cases);
    std::vector<sut::Observation> b = full.Observe(cases);
    std::vector<sut::Observation> c = no_index.Observe(cases);
    int64_t wrong_cases = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      wrong_cases += a[i].device->wrong_values > 0 ? 1 : 0;
      const std::string text =
          check::ExplainJson(cases[i], check::JudgeObservation(cases[i], std::move(a[i])), summary)
              .dump();
      ASSERT_EQ(text,
                check::ExplainJson(cases[i], check::JudgeObservation(cases[i], std::move(b[i])),
                                   full)
                    .dump())
          << name << " " << PrintCase(cases[i]);
      ASSERT_EQ(text,
                check::ExplainJson(cases[i], check::JudgeObservation(cases[i], std::move(c[i])),
                                   no_index)
                    .dump())
          << name << " " << PrintCase(cases[i]);
    }
    // Each mutant leaves wrong values in more cases than the known findings
    // do, so the summary and the lookups are tested.
    if (*name == '\0') {
      baseline = wrong_cases;
    } else {
      EXPECT_GT(wrong_cases, baseline) << name;
    }
  }
}

}  // namespace
}  // namespace r3::gpu
