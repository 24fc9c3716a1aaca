// One batch's launch on the GPUs: every case's buffers placed in the arenas,
// every phase (fill, dispatch all-gather, stand-in kernel, TP all-gather,
// capture, judge) one launch per GPU over a task table, and the judge's
// per-rank summaries (wrong values, the first of them) read back. Used by the batch runner and,
// phase by phase, by the graph runner. Included by .cu files only.
#ifndef R3_GPU_BATCH_LAUNCH_H_
#define R3_GPU_BATCH_LAUNCH_H_

#include <cstdint>
#include <span>
#include <vector>

#include "r3/case/case.h"
#include "r3/gpu/arena.h"
#include "r3/gpu/collectives.h"
#include "r3/gpu/decode.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/internal/bump.h"
#include "r3/gpu/kernels.h"
#include "r3/gpu/plan.h"
#include "r3/sut/observation.h"

namespace r3::gpu::internal {

struct RankBuffers {
  int device = 0;
  int32_t* full = nullptr;
  int32_t* local = nullptr;
  int32_t* routed = nullptr;
  int16_t* replay = nullptr;
  char* tp_gathered = nullptr;
  int32_t* capturer = nullptr;
  int64_t readback_rows = 0;  // capturer rows the judge checks
  int64_t counter = 0;        // this rank's first judge slot among its GPU's counters
};

// One case of a batch, from plan to buffers.
struct Work {
  const Case* c = nullptr;
  sut::Observation host;
  Plan plan;
  uint64_t seed = 0;
  bool nccl = false;
  std::vector<RankBuffers> ranks;
  std::vector<int64_t> bytes;       // per GPU: this case's buffers
  std::vector<int64_t> seed_index;  // per GPU: its slot among the seeds
};

// Host SUT, plan and placement of one case; no CUDA call.
Work PrepareWork(const Case& c, const sut::SutOptions& sut, bool nccl, int devices);

// Carves the case's buffers out of one bump per GPU (null pointers when the
// bumps only measure).
void AllocateWork(Work& w, std::vector<Bump>& bumps);

// Where one GPU's share of a batch lies in its blob, which goes up in one
// copy: [seeds | counters], then each phase's task table, aligned.
struct BlobLayout {
  // Where a phase's table lies (byte offset in the blob), its task count and
  // its largest task.
  struct Table {
    int64_t offset = 0;
    int64_t count = 0;
    int64_t max_work = 0;
  };
  int64_t seeds = 0, counters = 0;            // entries
  int64_t header_bytes = 0, total_bytes = 0;  // seeds + counters; all tables
  int64_t pinned_offset = 0;
  char* device_base = nullptr;
  std::vector<Table> tables;  // in phase order (batch_launch.cu's kPhases)
};

class BatchLaunch {
 public:
  BatchLaunch(std::vector<DeviceArena>& devices, PinnedArena& pinned, Collectives& collectives)
      : devices_(devices), pinned_(pinned), collectives_(collectives) {}

  // Places the works' buffers and builds and uploads the task tables.
  void Load(std::vector<Work>& works);
  // The phases, on every GPU's stream (graph-capturable when all emulated).
  void EnqueuePhases();
  // The NCCL cases' communicators, created before a graph captures their
  // all-gathers.
  void ConnectCollectives();
  // Seeds and zeroed counters to the GPUs (before each graph replay).
  void UploadHeader();
  // Counters back to pinned memory; valid after Wait().
  void EnqueueCounterDownload();
  void Wait();

  // Load + phases + download + wait.
  void Run(std::vector<Work>& works);

  void SetSeed(Work& w, uint64_t seed);
  // What the judge found in the rank's capturer: its wrong values and the
  // first of them. Valid after Wait().
  RankSummary Summary(const Work& w, size_t rank) const;

 private:
  void BuildTables(std::vector<Work>& works);
  // connect_only: create the NCCL groups' communicators, enqueue nothing.
  void EnqueueGather(int phase, bool connect_only = false);

  std::vector<DeviceArena>& devices_;
  PinnedArena& pinned_;
  Collectives& collectives_;
  std::vector<Work>* works_ = nullptr;
  std::vector<BlobLayout> layout_;  // per GPU
  char* pinned_base_ = nullptr;
};

}  // namespace r3::gpu::internal

#endif  // R3_GPU_BATCH_LAUNCH_H_
