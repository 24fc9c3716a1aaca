#include "r3/sut/mutants.h"

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "r3/sut/dispatch_plan.h"

namespace r3::sut {
namespace {

constexpr std::array<MutantInfo, static_cast<size_t>(Mutant::kCount)> kCore = {{
    {.id = Mutant::kSizeByDpWithEp,
     .name = "size-by-dp-with-ep",
     .description = "pr50874 sizing multiplies M by the DP size even when EP is on",
     .equivalent = false,
     .gpu_only = false,
     .sizing = true},
    {Mutant::kShardStartWithoutS, "shard-start-without-S",
     "ep-sp-shards starts at sum(local_sizes[:d]) instead of sum(local_sizes[:d*S])", false,
     false, true},
    {Mutant::kNoSpTrim, "no-sp-trim",
     "ep-sp-shards copies the whole shard group, SP padding rows included", false, false, true},
    {Mutant::kNaiveDpEndOffByOne, "naive-dp-end-off-by-one",
     "naive-dp takes end = N[0] + ... + N[d] - 1, dropping the rank's last row", false, false, true},
    {Mutant::kLocalSizesLenEqDp, "local-sizes-len-eq-dp",
     "ep-sp-shards asserts len(local_sizes) == D instead of len(local_sizes) % D == 0", false,
     false, true},
    {Mutant::kShardsBeforeNaiveDp, "shards-before-naive-dp",
     "tests ep-sp-shards before naive-dp (equivalent: same rows whenever both match)", true,
     false, true},
    {Mutant::kSnapshotInt8, "snapshot-int8",
     "snapshots narrow to signed int8 (not uint8) for at most 256 experts", false, false, true},
    {Mutant::kSpTpGatherNoTrim, "sp-tp-gather-no-trim",
     "sp-tp-gather keeps all T*cdiv(L,T) TP-gathered rows, SP padding included, instead of L",
     false, false, true},
    // The capturer allocates its own buffer, so an engine SUT's buffer is the
    // engine's: ObserveDispatch sizes it this way for the built-in SUT only.
    {Mutant::kCapturerRowsPerShard, "capturer-rows-per-shard",
     "the capturer buffer holds cdiv(M, T) rows (one TP shard's count) instead of M; a rank "
     "with L > cdiv(M, T) rows overflows it (built-in SUT only: an engine allocates its own)",
     false, false, true},
    {.id = Mutant::kGpuLayerStride,
     .name = "gpu-layer-stride",
     .description = "GPU capture copy uses top_k instead of num_layers*top_k as the row stride",
     .equivalent = false,
     .gpu_only = true,
     .capture_bug = kLayerStrideBug},
    {.id = Mutant::kGpuGatherReversed,
     .name = "gpu-gather-reversed",
     .description = "GPU all-gather places group members in reverse rank order",
     .equivalent = false,
     .gpu_only = true,
     .gather_bug = kReversedMembersBug},
    // Real-model shapes: invisible at top_k 4 and at row counts that are
    // multiples of 4, the shapes small generators draw.
    {.id = Mutant::kGpuVecGroups,
     .name = "gpu-vec-groups",
     .description = "the vectorised GPU capture copies one 4-wide group per row instead of "
                    "top_k/4 (right only for top_k 4)",
     .equivalent = false,
     .gpu_only = true,
     .capture_bug = kVecGroupsBug},
    {.id = Mutant::kGpuTailRows,
     .name = "gpu-tail-rows",
     .description = "the GPU capture copies rows in tiles of 4 and drops the last partial tile",
     .equivalent = false,
     .gpu_only = true,
     .capture_bug = kTailRowsBug},
    {.id = Mutant::kGpuSkippedCollective,
     .name = "gpu-skipped-collective",
     .description = "the last member of each GPU all-gather group skips the collective (on "
                    "separate GPUs its peers wait forever)",
     .equivalent = false,
     .gpu_only = true,
     .gather_bug = kLastMemberSkipsBug},
}};

// kCore's host mutants, the dispatch plan's rows (ids after kCount), then
// kCore's GPU-only ones: `r3check mutants` lists them in this order.
std::vector<MutantInfo> BuildCatalogue() {
  std::vector<MutantInfo> all;
  for (const MutantInfo& info : kCore) {
    if (!info.gpu_only) all.push_back(info);
  }
  const std::span<const DispatchMutant> rows = DispatchMutants();
  for (size_t i = 0; i < rows.size(); ++i) {
    all.push_back({.id = DispatchMutantId(i),
                   .name = rows[i].name,
                   .description = rows[i].description,
                   .equivalent = false,
                   .gpu_only = false,
                   .dispatch = true});
  }
  for (const MutantInfo& info : kCore) {
    if (info.gpu_only) all.push_back(info);
  }
  return all;
}

}  // namespace

std::span<const MutantInfo> MutantCatalogue() {
  static const std::vector<MutantInfo> catalogue = BuildCatalogue();
  return catalogue;
}

const MutantInfo& GetMutantInfo(Mutant id) {
  for (const MutantInfo& info : MutantCatalogue()) {
    if (info.id == id) return info;
  }
  throw std::out_of_range("unknown mutant id");
}

std::optional<Mutant> FindMutant(std::string_view name) {
  for (const MutantInfo& info : MutantCatalogue()) {
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
