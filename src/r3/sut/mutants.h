// The catalogue of seeded bugs ("mutants"): realistic mistakes a developer
// could make in vLLM's capture, sizing, dispatch or GPU data movement. The
// SUTs consult a MutantSet at the exact place each mistake would be made; a
// test suite is only as good as the mutants it kills.
//
// Every mutant is one row of the table in mutants.cc: its name, its
// description, its kind and what its kind needs. A dispatch row carries its
// edit of the dispatch plan and a GPU row its bit (gpu_bugs.h), so the
// plan, the GPU path and engine requests take those up from the row; only
// a host row needs a handle below, for the `mutants.has(...)` where the
// host SUT or the sizing policy makes its mistake.
#ifndef R3_SUT_MUTANTS_H_
#define R3_SUT_MUTANTS_H_

#include <bitset>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "r3/sut/gpu_bugs.h"

namespace r3 {
struct Case;
}  // namespace r3

namespace r3::sut {

struct DispatchPlan;

// A mutant's id: its row's place in the catalogue. The enumerators are the
// handles of the host rows, which come first, in this order (mutants.cc
// checks it at compile time); every other row is found by its name.
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
};

// Room for every mutant id.
inline constexpr size_t kMaxMutants = 64;

// Where a mutant's mistake lives, which says who can honour it.
enum class MutantKind : uint8_t {
  // The built-in replay sizing policy. An engine that loaded its own sizing
  // code is judged on the buffer that code allocated, so it cannot honour it.
  kSizing,
  // The host SUT's capture (or snapshot) code. An engine SUT runs the
  // engine's own capture, so it cannot honour it.
  kHostCapture,
  // An edit of the shared dispatch plan: the host SUT, the GPU path and
  // engine requests all honour it.
  kDispatch,
  // The GPU data movement (a kernel or an all-gather); the host SUT ignores it.
  kGpu,
};

// Edits the correct plan (ranks' rows, local_sizes, groups' members) before
// its gathers run, and leaves it alone where the mistake cannot happen.
using PlanEdit = void (*)(const Case& c, DispatchPlan& plan);

struct MutantInfo {
  // A host row names its handle; every other row leaves this and the
  // catalogue numbers it by its place.
  Mutant id = static_cast<Mutant>(kMaxMutants);
  std::string_view name;
  std::string_view description;
  MutantKind kind = MutantKind::kHostCapture;
  bool equivalent = false;  // changes no observable result: a kill would be a false alarm
  PlanEdit plan_edit = nullptr;            // kDispatch: its edit of the plan
  CaptureBug capture_bug = kNoCaptureBug;  // kGpu: its mistake in the capture kernel
  GatherBug gather_bug = kNoGatherBug;     // kGpu: its mistake in the all-gathers

  // The kind, as the flags readers test; a row never sets them.
  bool gpu_only = kind == MutantKind::kGpu;
  bool host_capture = kind == MutantKind::kHostCapture;
  bool dispatch = kind == MutantKind::kDispatch;
  bool sizing = kind == MutantKind::kSizing;
};

// Host rows, then dispatch rows, then GPU rows: `r3check mutants` lists
// them in this order.
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
