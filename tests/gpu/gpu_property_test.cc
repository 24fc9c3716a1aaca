// RapidCheck properties of the GPU path. Cases are generated on the host and
// run in batches on the GPU; shrinking works on the whole batch.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "properties/case_domain_gen.h"
#include "properties/invariant_property.h"
#include "r3/case/case_fields.h"
#include "r3/case/case_format.h"
#include "r3/case/case_shape.h"
#include "r3/check/run_case.h"
#include "r3/gpu/gpu.h"
#include "r3/sut/sut.h"
#include "gpu_testing.h"

namespace r3::gpu {
namespace {

using testing::DiffAgainstHost;
using testing::GpuCaseResult;
using testing::RunOnGpu;
using testing::ViolatedInvariants;

}  // namespace
}  // namespace r3::gpu

// Readable counterexamples (a Case prints as its r3case text: case_domain_gen.h).
namespace r3 {
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
  // The shapes of the models people run (GenRealModelCase).
  bool real_model = false;
};

// The case domain's ranges for `shape`: a few ranks, M < 48, top_k <= 5
// and at most 3 layers unless real_model.
CaseShape DomainOf(const Shape& shape) {
  CaseShape domain;
  domain.Set(FieldId::kDp, shape.min_dp, shape.max_dp)
      .Set(FieldId::kTp, 1, shape.max_tp)
      .Set(FieldId::kMaxNumBatchedTokens, 1, 47)
      .Set(FieldId::kNumExperts, shape.informative ? 256 : 1, 40000)
      // Real models route some layers to one expert: top_k 1 stays in.
      .Set(FieldId::kTopK, shape.informative && !shape.real_model ? 2 : 1,
           shape.real_model ? 16 : 5)
      .Set(FieldId::kNumLayers, shape.min_layers, shape.real_model ? 128 : 3);
  if (shape.naive_only) domain.Set(FieldId::kDispatch, /*naive=*/0, /*naive=*/0);
  return domain;
}

// Small legal cases of every shape vLLM produces, from the case domain:
// eager ragged steps, idle ranks, and (half the cases) CUDA-graph steps
// where every DP rank is padded to one captured size.
rc::Gen<Case> GenCase(Shape shape) {
  const CaseShape domain = DomainOf(shape);
  return rc::gen::exec([=] {
    Case c = *props::GenCaseIn(domain);
    if (*rc::gen::arbitrary<bool>()) {
      const int64_t most = *std::max_element(c.step.tokens.begin(), c.step.tokens.end());
      const int64_t size = *rc::gen::inRange<int64_t>(most, c.config.max_num_batched_tokens + 1);
      c.step.padded.assign(c.step.tokens.size(), size);
    }
    if (shape.real_model) {
      // top_k 8 most of the time; layers mostly in the 40-90 of today's models.
      c.config.top_k = *rc::gen::weightedOneOf<int64_t>(
          {{3, rc::gen::just<int64_t>(8)}, {2, rc::gen::inRange<int64_t>(1, 17)}});
      c.config.num_layers = *rc::gen::weightedOneOf<int64_t>(
          {{1, rc::gen::just<int64_t>(1)}, {2, rc::gen::inRange<int64_t>(2, 40)},
           {4, rc::gen::inRange<int64_t>(40, 91)}, {2, rc::gen::inRange<int64_t>(91, 129)}});
    }
    ClampToShape(c, domain);  // a no-op unless an override left the domain
    return c;
  });
}

// The shapes of the models people run, which the small generator above
// never draws: top_k 8 most of the time, else 1-16 (odd and even, with and
// without the 4-wide vector copy); 1-128 layers, most in the 40-90 of
// today's MoE models; and captures of any row count, not only multiples of
// the vector width. Fills always tell rows apart.
rc::Gen<Case> GenRealModelCase() {
  // Size 100 throughout: RapidCheck's inRange favours small values at small
  // sizes, and real models are not small. Shrinking still reaches the
  // smallest case.
  return rc::gen::resize(
      100, GenCase({.max_dp = 3, .max_tp = 2, .informative = true, .real_model = true}));
}

// The shape classes a kernel path depends on, and the rows the host SUT
// says each rank captures.
struct ShapeClasses {
  std::vector<std::string> names;
  bool two_groups_captured = false;  // vector copy with >= 2 groups per row
  bool partial_tile_captured = false;  // a capture of rows % 4 != 0
  bool rows_captured = false;
};

ShapeClasses ClassifyShape(const Case& c) {
  ShapeClasses out;
  const int64_t k = c.config.top_k;
  const int64_t layers = c.config.num_layers;
  out.names.push_back(k == 1   ? "top_k 1"
                      : k == 8 ? "top_k 8"
                      : k % 2  ? "top_k odd, not 1"
                               : "top_k even, not 8");
  if (k > 8) out.names.push_back("top_k 9-16");
  out.names.push_back(k % 4 == 0 ? "vector copy (top_k % 4 == 0)" : "scalar copy");
  out.names.push_back(layers == 1    ? "layers 1"
                      : layers < 40  ? "layers 2-39"
                      : layers <= 90 ? "layers 40-90"
                                     : "layers 91-128");
  const sut::Observation host = sut::RunSut(c, {});
  for (const sut::RankObservation& r : host.ranks) {
    const int64_t rows = TotalRows(r.captured);
    if (rows == 0) continue;
    out.rows_captured = true;
    out.partial_tile_captured = out.partial_tile_captured || rows % 4 != 0;
    out.two_groups_captured = out.two_groups_captured || (k % 4 == 0 && k >= 8);
  }
  if (out.partial_tile_captured) out.names.push_back("captured rows % 4 != 0");
  if (out.rows_captured && !out.partial_tile_captured) out.names.push_back("captured rows % 4 == 0");
  if (out.two_groups_captured) out.names.push_back("vector copy, 2+ groups per row, captured");
  return out;
}

struct ClassFloor {
  const char* name;
  double min_fraction;
};

// Floors well under the generator's weights (top_k 8 is drawn 60 % + 40/16 %
// of the time, 9-16 20 %, layers 40-90 44 %), far above sampling noise at
// 2000 cases.
constexpr ClassFloor kShapeFloors[] = {
    {"top_k 1", 0.01},
    {"top_k 8", 0.45},
    {"top_k odd, not 1", 0.10},
    {"top_k even, not 8", 0.08},
    {"top_k 9-16", 0.10},
    {"vector copy (top_k % 4 == 0)", 0.50},
    {"scalar copy", 0.20},
    {"layers 1", 0.05},
    {"layers 2-39", 0.12},
    {"layers 40-90", 0.30},
    {"layers 91-128", 0.12},
    {"captured rows % 4 != 0", 0.25},
    {"captured rows % 4 == 0", 0.05},
    {"vector copy, 2+ groups per row, captured", 0.30},
};

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
  const std::vector<GpuCaseResult> results = RunOnGpu(SharedRunner(mode, mutants), cases);
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

// The host suite's property body (properties/invariant_property.h) with the
// GPU path as its producer, on cases that fit the device (the host suite's
// generator draws replay buffers of up to 16 GiB per case).
RC_GTEST_PROP(GpuInvariantProperties, EveryInvariantHoldsOnTheGpuPath, ()) {
  props::CheckCase(*GenCase({}), std::nullopt, SharedRunner(RankMode::kEmulated));
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
  const GpuCaseResult clean = RunOnGpu(SharedRunner(RankMode::kAuto), c);
  bool two_rows = false;
  for (const sut::RankObservation& r : clean.result.observation.ranks) {
    two_rows = two_rows || TotalRows(r.captured) >= 2;
  }
  RC_PRE(two_rows);
  const GpuCaseResult r =
      RunOnGpu(SharedRunner(RankMode::kAuto, sut::MutantSet(sut::MutantNamed("gpu-layer-stride"))), c);
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
      RunOnGpu(SharedRunner(RankMode::kAuto, sut::MutantSet(sut::MutantNamed("gpu-gather-reversed"))), c);
  RC_LOG() << PrintCase(c) << r.Summary();
  RC_ASSERT(!r.Passes());
}

// The generator's class coverage, printed and held above each floor: the
// GPU suite on its own exercises every kernel path at real-model shapes.
TEST(GpuPropertyTest, RealModelShapeClassesAreAboveTheirFloors) {
  constexpr int kCases = 2000;
  const rc::Gen<Case> gen = GenRealModelCase();
  std::map<std::string, int> counts;
  rc::Random random(/*seed=*/20261130);
  for (int i = 0; i < kCases; ++i) {
    // A discarded draw (an invalid case) is drawn again.
    std::optional<Case> c;
    for (int attempt = 0; attempt < 100 && !c; ++attempt) {
      try {
        c = gen(random.split(), i % 100).value();
      } catch (const rc::detail::CaseResult&) {
      } catch (const rc::GenerationFailure&) {
      }
    }
    ASSERT_TRUE(c.has_value());
    for (const std::string& name : ClassifyShape(*c).names) ++counts[name];
  }
  std::cout << "GPU shape classes over " << kCases << " cases:\n";
  for (const ClassFloor& floor : kShapeFloors) {
    const double share = static_cast<double>(counts[floor.name]) / kCases;
    std::cout << "  " << floor.name << ": " << counts[floor.name] << " (" << 100 * share
              << " %, floor " << 100 * floor.min_fraction << " %)\n";
    EXPECT_GE(share, floor.min_fraction) << floor.name;
  }
}

RC_GTEST_PROP(GpuPropertyTest, RealModelShapesMatchTheHostSut, ()) {
  const auto cases = *rc::gen::container<std::vector<Case>>(
      *rc::gen::inRange<size_t>(1, 9), GenRealModelCase());
  for (const Case& c : cases) {
    for (const std::string& name : ClassifyShape(c).names) RC_CLASSIFY(true, name);
  }
  AssertMatchesHost(cases, RankMode::kEmulated, {});
}

RC_GTEST_PROP(GpuPropertyTest, RealModelShapesMatchTheHostSutOverNccl, ()) {
  const auto cases = *rc::gen::container<std::vector<Case>>(
      *rc::gen::inRange<size_t>(1, 5), GenRealModelCase());
  AssertMatchesHost(cases, RankMode::kAuto, {});
}

// Every kernel mutant is caught on every case of the class where it moves
// data: the GPU suite alone catches a data-movement bug in any kernel path.
void ExpectKernelMutantCaught(sut::Mutant m, const Case& c) {
  const GpuCaseResult clean = RunOnGpu(SharedRunner(RankMode::kEmulated), c);
  RC_PRE(clean.Passes());
  const GpuCaseResult r = RunOnGpu(SharedRunner(RankMode::kEmulated, sut::MutantSet(m)), c);
  RC_LOG() << PrintCase(c) << r.Summary();
  RC_ASSERT(!r.Passes());
  RC_ASSERT(r.wrong_values > 0);
}

RC_GTEST_PROP(GpuPropertyTest, VecGroupsMutantIsCaughtWheneverARowHasTwoGroups, ()) {
  const Case c = *GenRealModelCase();
  RC_PRE(ClassifyShape(c).two_groups_captured);
  ExpectKernelMutantCaught(sut::MutantNamed("gpu-vec-groups"), c);
}

RC_GTEST_PROP(GpuPropertyTest, TailRowsMutantIsCaughtWheneverATileIsPartial, ()) {
  const Case c = *GenRealModelCase();
  RC_PRE(ClassifyShape(c).partial_tile_captured);
  ExpectKernelMutantCaught(sut::MutantNamed("gpu-tail-rows"), c);
}

RC_GTEST_PROP(GpuPropertyTest, LayerStrideMutantIsCaughtAtRealModelShapes, ()) {
  const Case c = *GenRealModelCase();
  RC_PRE(c.config.num_layers >= 2);
  bool two_rows = false;
  for (const sut::RankObservation& r : sut::RunSut(c, {}).ranks) {
    two_rows = two_rows || TotalRows(r.captured) >= 2;
  }
  RC_PRE(two_rows);
  ExpectKernelMutantCaught(sut::MutantNamed("gpu-layer-stride"), c);
}

}  // namespace
}  // namespace r3::gpu
