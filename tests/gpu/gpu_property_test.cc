// RapidCheck properties of the GPU path. Cases are generated on the host and
// run in batches on the GPU; shrinking works on the whole batch.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <memory>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/check/run_case.h"
#include "r3/gpu/gpu.h"
#include "gpu_testing.h"

namespace r3::gpu {
namespace {

using testing::DiffAgainstHost;
using testing::ViolatedInvariants;

}  // namespace
}  // namespace r3::gpu

// Readable counterexamples.
namespace r3 {
void showValue(const Case& c, std::ostream& os) { os << "\n" << PrintCase(c); }
namespace sut {
void showValue(Mutant m, std::ostream& os) { os << GetMutantInfo(m).name; }
}  // namespace sut
}  // namespace r3

namespace r3::gpu {
namespace {

struct Shape {
  int64_t min_dp = 1;
  int64_t max_dp = 4;
  int64_t max_tp = 4;
  bool informative = false;  // fills that tell rows apart (>= 256 ids, top_k >= 2)
  bool naive_only = false;
  int64_t min_layers = 1;
};

// Small legal cases of every shape vLLM produces: eager ragged, CUDA-graph
// padded, idle ranks. max_dp * max_tp bounds the ranks.
rc::Gen<Case> GenCase(Shape shape) {
  return rc::gen::exec([=] {
    const bool informative = shape.informative;
    Case c;
    Config& cfg = c.config;
    cfg.dp = *rc::gen::inRange<int64_t>(shape.min_dp, shape.max_dp + 1);
    cfg.tp = *rc::gen::inRange<int64_t>(1, shape.max_tp + 1);
    cfg.ep = *rc::gen::arbitrary<bool>();
    cfg.dispatch = shape.naive_only ? Dispatch::kNaive
                                    : *rc::gen::element(Dispatch::kNaive, Dispatch::kInternal);
    cfg.sp = *rc::gen::element(SpMode::kAuto, SpMode::kOff);
    cfg.max_num_batched_tokens = *rc::gen::inRange<int64_t>(1, 48);
    cfg.num_experts = informative ? *rc::gen::element<int64_t>(256, 4096, 32768)
                                  : *rc::gen::element<int64_t>(1, 8, 256, 40000);
    cfg.top_k = *rc::gen::inRange<int64_t>(informative ? 2 : 1,
                                           std::min<int64_t>(cfg.num_experts, 5) + 1);
    cfg.num_layers = *rc::gen::inRange<int64_t>(shape.min_layers, 4);
    const int64_t m = cfg.max_num_batched_tokens;
    const bool graph = *rc::gen::arbitrary<bool>();
    const int64_t size = *rc::gen::inRange<int64_t>(0, m + 1);
    for (int64_t d = 0; d < cfg.dp; ++d) {
      const int64_t real = *rc::gen::inRange<int64_t>(0, (graph ? size : m) + 1);
      c.step.tokens.push_back(real);
      c.step.padded.push_back(graph ? size : real);
    }
    RC_PRE(ValidateCase(c).field.empty());
    return c;
  });
}

// One runner per mode for the whole binary: NCCL communicators are cached.
Runner& SharedRunner(RankMode mode, const sut::MutantSet& mutants = {}) {
  static std::map<std::pair<int, std::string>, std::unique_ptr<Runner>> runners;
  std::string key;
  for (const sut::MutantInfo& info : sut::MutantCatalogue()) {
    if (mutants.has(info.id)) key += std::string(info.name) + ",";
  }
  auto& slot = runners[{static_cast<int>(mode), key}];
  if (!slot) {
    GpuOptions o;
    o.mode = mode;
    o.sut.mutants = mutants;
    slot = std::make_unique<Runner>(o);
  }
  return *slot;
}

void AssertMatchesHost(const std::vector<Case>& cases, RankMode mode,
                       const sut::MutantSet& mutants) {
  const std::vector<GpuCaseResult> results = SharedRunner(mode, mutants).RunBatch(cases);
  RC_ASSERT(results.size() == cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const GpuCaseResult& r = results[i];
    const check::CaseResult host = check::RunCase(cases[i], {.mutants = mutants});
    RC_LOG() << PrintCase(cases[i]) << r.Summary();
    RC_ASSERT(DiffAgainstHost(r) == "");
    RC_ASSERT(ViolatedInvariants(r.result.verdict) == ViolatedInvariants(host.verdict));
    RC_ASSERT(r.Passes() == host.PassesOrKnown());
    if (r.result.verdict.ok()) RC_ASSERT(r.wrong_values == 0);
  }
}

RC_GTEST_PROP(GpuPropertyTest, EmulatedBatchesMatchTheHostSut, ()) {
  const auto cases = *rc::gen::container<std::vector<Case>>(
      *rc::gen::inRange<size_t>(1, 9), GenCase({}));
  AssertMatchesHost(cases, RankMode::kEmulated, {});
}

// With two GPUs every case of 2 or more ranks runs over NCCL: one rank per
// GPU, or ranks spread round-robin.
RC_GTEST_PROP(GpuPropertyTest, NcclBatchesMatchTheHostSut, ()) {
  const auto cases = *rc::gen::container<std::vector<Case>>(
      *rc::gen::inRange<size_t>(1, 9), GenCase({.max_dp = 3, .max_tp = 2}));
  AssertMatchesHost(cases, RankMode::kAuto, {});
}

RC_GTEST_PROP(GpuPropertyTest, HostMutantsShowTheSameOnTheGpu, ()) {
  std::vector<sut::Mutant> host_mutants;
  for (const sut::MutantInfo& info : sut::MutantCatalogue()) {
    if (!info.gpu_only) host_mutants.push_back(info.id);
  }
  const sut::Mutant m = *rc::gen::elementOf(host_mutants);
  const auto cases = *rc::gen::container<std::vector<Case>>(
      *rc::gen::inRange<size_t>(1, 5), GenCase({.max_dp = 3, .max_tp = 3}));
  AssertMatchesHost(cases, RankMode::kAuto, sut::MutantSet(m));
}

// Row 1 of a capture lands in a cell the model says stays unwritten.
RC_GTEST_PROP(GpuPropertyTest, LayerStrideMutantIsAlwaysCaught, ()) {
  // Full-size cases from the first test: small sizes rarely capture two rows.
  const Case c = *rc::gen::resize(
      100, GenCase({.max_dp = 3, .max_tp = 2, .informative = true, .min_layers = 2}));
  const GpuCaseResult clean = SharedRunner(RankMode::kAuto).Run(c);
  bool two_rows = false;
  for (const sut::RankObservation& r : clean.result.observation.ranks) {
    two_rows = two_rows || TotalRows(r.captured) >= 2;
  }
  RC_PRE(two_rows);
  const GpuCaseResult r =
      SharedRunner(RankMode::kAuto, sut::MutantSet(sut::Mutant::kGpuLayerStride)).Run(c);
  RC_LOG() << PrintCase(c) << r.Summary();
  RC_ASSERT(r.wrong_values > 0);
  RC_ASSERT(!r.Passes() || !clean.Passes());
}

// Reversing a gather moves rows whenever two members send rows.
RC_GTEST_PROP(GpuPropertyTest, ReversedGatherIsCaughtWhenTwoMembersSendRows, ()) {
  const Case c = *rc::gen::resize(
      100, GenCase({.min_dp = 2, .max_dp = 3, .max_tp = 2, .informative = true,
                    .naive_only = true}));
  const check::CaseResult host = check::RunCase(c, {});
  RC_PRE(host.verdict.ok());
  // local_sizes lists one gather group's members: the EP group under SP,
  // else every DP group (one per TP index) has these sizes.
  const std::vector<int64_t>& sizes = *host.observation.local_sizes;
  RC_PRE(std::count_if(sizes.begin(), sizes.end(), [](int64_t s) { return s > 0; }) >= 2);
  const GpuCaseResult r =
      SharedRunner(RankMode::kAuto, sut::MutantSet(sut::Mutant::kGpuGatherReversed)).Run(c);
  RC_LOG() << PrintCase(c) << r.Summary();
  RC_ASSERT(!r.Passes());
}

}  // namespace
}  // namespace r3::gpu
