// What a system under test did with one case: per rank, the batch size its
// capture received, the branch it took, and the rows it copied into the
// capturer buffer. Every Producer (producer.h) gives this; the check layer
// judges it.
#ifndef R3_SUT_OBSERVATION_H_
#define R3_SUT_OBSERVATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "r3/case/rows.h"

namespace r3::sut {

// kOther: an engine SUT captured without raising at a batch size none of
// vLLM's branches tests (see r3::engine's branch inference).
enum class Branch { kNoDp, kNaiveDp, kLocal, kEpSpShards, kSpTpGather, kError, kOther };

std::string_view BranchName(Branch branch);

struct RankObservation {
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t n = 0;  // rows of topk_ids the capture received
  Branch branch = Branch::kError;
  std::string error;     // capture's exception, empty when none
  RowRuns captured;      // rows written to device_buffer[:len, layer, :]
  // Rows an engine SUT wrote outside device_buffer[:len, layer, :], or whose
  // values decode to no row of topk_ids (the built-in SUTs never do).
  int64_t stray_rows = 0;
  // The slice [capture_start, capture_end) of topk_ids (after the TP all-gather
  // in sp-tp-gather) that was copied; the GPU path replays it on real data.
  int64_t capture_start = 0;
  int64_t capture_end = 0;
  std::string replay_error;  // the kernel's buffer check, empty when it passed
  // The replay buffer an engine's own sizing code allocated for this rank;
  // -1 (every built-in SUT): the observation's replay_rows.
  int64_t replay_rows = -1;
  // Rows of the buffer slice the engine's hand-off gave the kernel (the sink
  // era's buffer[:len(a1q)]); -1: not observed.
  int64_t kernel_slice_rows = -1;
};

// The first value of a capturer buffer that differs from what the model says
// it must hold (the fill of DP rank dp's rows at the capture layer, unwritten
// everywhere else).
struct Mismatch {
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t row = 0;
  int64_t layer = 0;
  int64_t k = 0;
  int64_t got = 0;
  int64_t expected = 0;
};

// What a device producer (the GPU path) checked on real data, beside what it
// observed: the judge turns wrong values that the rows cannot show (another
// layer, a cell outside the captured rows) into a rows-exact violation.
struct DeviceCheck {
  std::string mode;  // "emulated on 1 GPU" | "nccl on N GPUs" (+ ", graph")
  uint64_t seed = 0;  // fill seed of the (last) step checked
  int64_t layer = 0;  // the MoE layer whose capture is checked
  int64_t steps = 0;  // steps checked (graph replays)
  // Summed over the steps; first_mismatch is the first step's.
  int64_t values_checked = 0;
  int64_t wrong_values = 0;
  std::optional<Mismatch> first_mismatch;
  // The same of the one step whose rows the observation shows (in graph
  // mode the replay kept; else the totals): what the judge's rows-exact
  // violation names.
  int64_t step_wrong_values = 0;
  std::optional<Mismatch> step_first_mismatch;
};

struct Observation {
  std::optional<std::vector<int64_t>> local_sizes;
  // The sizing policy: a built-in one's name, or the engine's own sizing
  // code ("vllm sizing: FusedMoEExpertsMonolithic (modular_kernel.py, sha256
  // 1a2b3c4d5e6f)"), whose rows are then per rank (the smallest here).
  std::string policy;
  int64_t replay_rows = 0;    // rows of the replay buffer
  int64_t kernel_rows = 0;    // largest n handed to the kernel this step
  int64_t capturer_rows = 0;  // rows of the capturer buffer (M)
  std::string replay_dtype;   // "int16"
  int64_t replay_max_id = 0;
  std::string snapshot_dtype;  // uint8 | uint16 | int32 (or a mutant's)
  int64_t snapshot_max_id = 0;
  std::vector<RankObservation> ranks;  // index d*T + t
  std::optional<DeviceCheck> device;   // set by a device producer only
};

}  // namespace r3::sut

#endif  // R3_SUT_OBSERVATION_H_
