// The catalogue of seeded bugs ("mutants"): realistic mistakes a developer
// could make in vLLM's capture or sizing code. The SUTs consult a
// MutantSet at the exact place each mistake would be made; a test suite is
// only as good as the mutants it kills.
#ifndef R3_SUT_MUTANTS_H_
#define R3_SUT_MUTANTS_H_

#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "r3/sut/gpu_bugs.h"

namespace r3::sut {

// Mutants of the dispatch plan are not listed here: each is one row of
// DispatchMutants() in dispatch_plan.cc, and its id follows kCount.
enum class Mutant : uint8_t {
  kSizeByDpWithEp,
  kShardStartWithoutS,
  kNoSpTrim,
  kNaiveDpEndOffByOne,
  kLocalSizesLenEqDp,
  kShardsBeforeNaiveDp,  // equivalent: must never be reported
  kSnapshotInt8,
  kSpTpGatherNoTrim,
  kCapturerRowsPerShard,
  // Data-movement mistakes only the GPU path can show.
  kGpuLayerStride,
  kGpuGatherReversed,
  kGpuVecGroups,
  kGpuTailRows,
  kGpuSkippedCollective,
  kCount,  // the first dispatch mutant's id
};

// Room for every mutant id, the dispatch plan's included.
inline constexpr size_t kMaxMutants = 64;

struct MutantInfo {
  Mutant id;
  std::string_view name;
  std::string_view description;
  bool equivalent;  // changes no observable result: a kill would be a false alarm
  bool gpu_only;    // lives in the GPU data movement; the host SUT ignores it
  // Lives in the host SUT's capture (or snapshot) code. An engine SUT runs
  // the engine's own capture, so it cannot honour it; dispatch and sizing
  // mutants stay r3check's and apply to engines too.
  bool host_capture = false;
  // An edit of the shared dispatch plan (a row of DispatchMutants()).
  bool dispatch = false;
  // Lives in the built-in replay sizing policy. An engine that loaded its own
  // sizing code is judged on the buffer that code allocated, so it cannot
  // honour it.
  bool sizing = false;
  // A GPU-only mutant's effect, the bit its mistake sets in the capture
  // kernel or in the all-gathers (gpu_bugs.h).
  CaptureBug capture_bug = kNoCaptureBug;
  GatherBug gather_bug = kNoGatherBug;
};

std::span<const MutantInfo> MutantCatalogue();
const MutantInfo& GetMutantInfo(Mutant id);
std::optional<Mutant> FindMutant(std::string_view name);
// FindMutant for names that must exist (tests, built-in tables): throws
// std::invalid_argument naming an unknown one.
Mutant MutantNamed(std::string_view name);

class MutantSet {
 public:
  MutantSet() = default;
  explicit MutantSet(Mutant m) { set(m); }
  void set(Mutant m) { bits_.set(static_cast<size_t>(m)); }
  bool has(Mutant m) const { return bits_.test(static_cast<size_t>(m)); }
  // No mutant on: the regression runner skips files saved against none.
  bool empty() const { return bits_.none(); }

 private:
  std::bitset<kMaxMutants> bits_;
};

}  // namespace r3::sut

#endif  // R3_SUT_MUTANTS_H_
