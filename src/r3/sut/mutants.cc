#include "r3/sut/mutants.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/internal/dispatch.h"
#include "r3/sut/internal/dispatch_steps.h"

namespace r3::sut {
namespace {

using enum MutantKind;
using internal::ShardRounding;

// The catalogue, one row a mutant, in listing order.
constexpr MutantInfo kRows[] = {
    {.id = Mutant::kSizeByDpWithEp,
     .name = "size-by-dp-with-ep",
     .description = "pr50874 sizing multiplies M by the DP size even when EP is on",
     .kind = kSizing},
    {.id = Mutant::kShardStartWithoutS,
     .name = "shard-start-without-S",
     .description =
         "ep-sp-shards starts at sum(local_sizes[:d]) instead of sum(local_sizes[:d*S])",
     .kind = kHostCapture},
    {.id = Mutant::kNoSpTrim,
     .name = "no-sp-trim",
     .description = "ep-sp-shards copies the whole shard group, SP padding rows included",
     .kind = kHostCapture},
    {.id = Mutant::kNaiveDpEndOffByOne,
     .name = "naive-dp-end-off-by-one",
     .description =
         "naive-dp takes end = N[0] + ... + N[d] - 1, dropping the rank's last row",
     .kind = kHostCapture},
    {.id = Mutant::kLocalSizesLenEqDp,
     .name = "local-sizes-len-eq-dp",
     .description =
         "ep-sp-shards asserts len(local_sizes) == D instead of len(local_sizes) % D == 0",
     .kind = kHostCapture},
    {.id = Mutant::kShardsBeforeNaiveDp,
     .name = "shards-before-naive-dp",
     .description =
         "tests ep-sp-shards before naive-dp (equivalent: same rows whenever both match)",
     .kind = kHostCapture,
     .equivalent = true},
    {.id = Mutant::kSnapshotInt8,
     .name = "snapshot-int8",
     .description = "snapshots narrow to signed int8 (not uint8) for at most 256 experts",
     .kind = kHostCapture},
    {.id = Mutant::kSpTpGatherNoTrim,
     .name = "sp-tp-gather-no-trim",
     .description =
         "sp-tp-gather keeps all T*cdiv(L,T) TP-gathered rows, SP padding included, instead of L",
     .kind = kHostCapture},
    // The capturer allocates its own buffer, so an engine SUT's buffer is the
    // engine's: ObserveDispatch sizes it this way for the built-in SUT only.
    {.id = Mutant::kCapturerRowsPerShard,
     .name = "capturer-rows-per-shard",
     .description = "the capturer buffer holds cdiv(M, T) rows (one TP shard's count) instead "
                    "of M; a rank with L > cdiv(M, T) rows overflows it (built-in SUT only: "
                    "an engine allocates its own)",
     .kind = kHostCapture},

    // The seeded dispatch bugs. Each edit must leave the plan alone where its
    // mistake cannot happen (the plan is then the correct one).
    {.name = "tp-major-ep-order",
     .description =
         "the EP all-gather concatenates shards TP-major (rank t*D + d) instead of d*T + t",
     .kind = kDispatch,
     .plan_edit =
         [](const Case& c, DispatchPlan& plan) {
           if (!plan.sp || plan.groups.size() != 1) return;
           std::vector<int64_t>& members = plan.groups[0].members;
           for (int64_t e = 0; e < static_cast<int64_t>(members.size()); ++e) {
             members[static_cast<size_t>(e)] = (e % c.config.dp) * c.config.tp + e / c.config.dp;
           }
         }},
    {.name = "floor-shard-size",
     .description = "local_sizes and SP shards use floor division N // sp instead of cdiv",
     .kind = kDispatch,
     .plan_edit =
         [](const Case& c, DispatchPlan& plan) {
           internal::PlanShards(c, plan, ShardRounding::kFloor);
         }},
    {.name = "sp-gather-dp-group",
     .description =
         "with SP the dispatch all-gathers over the DP group instead of the whole EP group",
     .kind = kDispatch,
     .plan_edit =
         [](const Case& c, DispatchPlan& plan) {
           if (plan.sp && plan.naive) internal::PlanDpGroups(c.config, plan);
         }},

    // Data-movement mistakes only the GPU path can show.
    {.name = "gpu-layer-stride",
     .description = "GPU capture copy uses top_k instead of num_layers*top_k as the row stride",
     .kind = kGpu,
     .capture_bug = kLayerStrideBug},
    {.name = "gpu-gather-reversed",
     .description = "GPU all-gather places group members in reverse rank order",
     .kind = kGpu,
     .gather_bug = kReversedMembersBug},
    // Real-model shapes: invisible at top_k 4 and at row counts that are
    // multiples of 4, the shapes small generators draw.
    {.name = "gpu-vec-groups",
     .description = "the vectorised GPU capture copies one 4-wide group per row instead of "
                    "top_k/4 (right only for top_k 4)",
     .kind = kGpu,
     .capture_bug = kVecGroupsBug},
    {.name = "gpu-tail-rows",
     .description = "the GPU capture copies rows in tiles of 4 and drops the last partial tile",
     .kind = kGpu,
     .capture_bug = kTailRowsBug},
    {.name = "gpu-skipped-collective",
     .description = "the last member of each GPU all-gather group skips the collective (on "
                    "separate GPUs its peers wait forever)",
     .kind = kGpu,
     .gather_bug = kLastMemberSkipsBug},
};

constexpr Mutant kUnnumbered = MutantInfo{}.id;

constexpr bool IsHost(MutantKind kind) { return kind == kSizing || kind == kHostCapture; }

// The rules that keep one table safe to extend, checked when it compiles.

// A host row names its handle and sits at its place (so the host rows come
// first, in the enum's order); no other row names one.
constexpr bool HandlesAreTheirRowsPlaces() {
  for (size_t i = 0; i < std::size(kRows); ++i) {
    const MutantInfo& m = kRows[i];
    if (IsHost(m.kind) ? static_cast<size_t>(m.id) != i : m.id != kUnnumbered) return false;
  }
  return true;
}

// Host rows, then dispatch rows, then GPU rows: the order `r3check mutants`
// lists them in.
constexpr bool ListedHostDispatchGpu() {
  int last = 0;
  for (const MutantInfo& m : kRows) {
    const int group = IsHost(m.kind) ? 0 : m.kind == kDispatch ? 1 : 2;
    if (group < last) return false;
    last = group;
  }
  return true;
}

// A dispatch row carries its plan edit, a GPU row its bit, and no row
// carries another kind's effect; the flags readers test follow the kind.
constexpr bool RowsFitTheirKinds() {
  for (const MutantInfo& m : kRows) {
    const bool has_bit = m.capture_bug != kNoCaptureBug || m.gather_bug != kNoGatherBug;
    if ((m.plan_edit != nullptr) != (m.kind == kDispatch)) return false;
    if (has_bit != (m.kind == kGpu)) return false;
    if (m.gpu_only != (m.kind == kGpu) || m.host_capture != (m.kind == kHostCapture) ||
        m.dispatch != (m.kind == kDispatch) || m.sizing != (m.kind == kSizing)) {
      return false;
    }
  }
  return true;
}

static_assert(HandlesAreTheirRowsPlaces(),
              "a host row names its Mutant handle and sits at its place; no other row names one");
static_assert(ListedHostDispatchGpu(), "rows go host, then dispatch, then GPU");
static_assert(RowsFitTheirKinds(),
              "a dispatch row carries a plan edit, a GPU row a bit, and a row never sets the "
              "flags its kind gives");
static_assert(std::size(kRows) <= kMaxMutants);

// Every row numbered by its place.
constexpr std::array<MutantInfo, std::size(kRows)> Numbered() {
  std::array<MutantInfo, std::size(kRows)> rows = std::to_array(kRows);
  for (size_t i = 0; i < rows.size(); ++i) rows[i].id = static_cast<Mutant>(i);
  return rows;
}

constexpr std::array<MutantInfo, std::size(kRows)> kMutants = Numbered();

}  // namespace

std::span<const MutantInfo> MutantCatalogue() { return kMutants; }

const MutantInfo& GetMutantInfo(Mutant id) {
  const size_t place = static_cast<size_t>(id);
  if (place >= kMutants.size()) throw std::out_of_range("unknown mutant id");
  return kMutants[place];
}

std::optional<Mutant> FindMutant(std::string_view name) {
  for (const MutantInfo& info : kMutants) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

Mutant MutantNamed(std::string_view name) {
  const std::optional<Mutant> id = FindMutant(name);
  if (!id) throw std::invalid_argument("no mutant named '" + std::string(name) + "'");
  return *id;
}

}  // namespace r3::sut
