// Reading the capturer buffers back: which (dp, token) each captured row came
// from, and how many values differ from what the model says must be there.
#ifndef R3_GPU_DECODE_H_
#define R3_GPU_DECODE_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "r3/case/case.h"
#include "r3/case/rows.h"
#include "r3/gpu/gpu.h"
#include "r3/gpu/plan.h"
#include "r3/sut/observation.h"

namespace r3::gpu {

// Rows [0, rows) of one rank's capturer buffer, every layer: (rows, L, K).
struct Readback {
  const int32_t* data = nullptr;
  int64_t rows = 0;
};

// What the judge found in one rank's read-back rows: how many values differ
// from the model's, and the first that does (its flat index in the (rows,
// L, K) block and the value there). The device's judge computes it, so that
// a failing case needs only its capture-layer rows back.
struct RankSummary {
  int64_t wrong_values = 0;
  int64_t first_index = -1;  // -1: no wrong value
  int32_t first_got = 0;
  // Capture-layer rows up to the last one holding anything but kUnwritten:
  // the rows past it read as padding, so the decode need not read them.
  // -1: not known (every captured row is decoded).
  int64_t written_rows = -1;
};

// One capturing rank's capture-layer rows [0, rows): (rows, K), and per
// row what the device's row index found (fill.h: PackedRow, kNoStepRow or
// kAskTheHost); found == nullptr: the host's index answers every lookup.
struct CaptureRows {
  const int32_t* data = nullptr;
  int64_t rows = 0;
  const int64_t* found = nullptr;
};

// Rows of the capturer to read back for a rank: everything the capture or
// the model touches, plus one row to see that nothing past it was written.
int64_t ReadbackRows(const Plan& plan, const Case& c, size_t rank);

struct Decoded {
  std::vector<RowRuns> captured;  // per rank: the identity of each row copied
  int64_t values_checked = 0;
  int64_t wrong_values = 0;
  std::optional<Mismatch> first_mismatch;
};

// The judge on the host: each rank's read-back rows against the model (the
// twin of the device's judge kernel, for --gpu-full-readback and tests).
std::vector<RankSummary> Summarize(const Case& c, const Plan& plan, uint64_t seed,
                                   std::span<const Readback> readback);

// Rows the decode needs of capturing rank `rank`: its slice's rows up to the
// read-back extent (0 for a rank that does not capture).
int64_t CaptureRowsOf(const Plan& plan, size_t rank, int64_t readback_rows);

// Of a rank's `capture_rows`, those the decode reads: up to the judge's
// last written row. The rest are unwritten and decode as one padding run.
int64_t DecodedRowsOf(const RankSummary& summary, int64_t capture_rows);

// The decoded observation from the judge's summaries and the capturing
// ranks' capture-layer rows: a row equal to the host SUT's claim or to the
// model's expected row is that row; otherwise it is looked up among all rows
// of the step (the host SUT's claim breaks ties between equal fills); an
// unknown row reads as padding. `readback_rows`: per rank, the rows the
// judge checked.
Decoded DecodeSummary(const Case& c, const Plan& plan, const sut::Observation& host,
                      uint64_t seed, std::span<const RankSummary> summaries,
                      std::span<const int64_t> readback_rows,
                      std::span<const CaptureRows> capture_rows);

// A row of the step: DP rank dp's token, or padding (dp == RowRun::kPad).
struct Identity {
  int64_t dp = RowRun::kPad;
  int64_t token = 0;
};

// Every row of a case's step by the hash of its fill, for the rows the
// device's index could not name. Built on the first Find, once, so that the
// chunks of one case's decode share it across threads.
class RowIndex {
 public:
  RowIndex(const Case& c, uint64_t seed, int64_t id_space);

  // The claim when it is a row of the step with these values; else the row
  // indexed last among those with these values (one lookup, not a walk over
  // every equal fill).
  std::optional<Identity> Find(const int32_t* values, const Identity& claim) const;
  bool IsStepRow(const Identity& id) const;
  bool Matches(const int32_t* values, const Identity& id) const;

 private:
  void Build() const;

  const Case& c_;
  uint64_t seed_;
  int64_t id_space_;
  mutable std::once_flag built_;
  mutable std::unordered_map<uint64_t, std::vector<Identity>> index_;  // in (d, t) order
};

// DecodeSummary in parts, for the thread pool: the summaries' part (values
// checked, wrong values, first mismatch; `captured` sized, every rank
// empty), and the captured rows [first, last) of rank `rank` as runs.
// AppendRuns of a rank's chunks in row order is DecodeSummary's runs.
Decoded DecodeSummaryOnly(const Case& c, const Plan& plan, uint64_t seed,
                          std::span<const RankSummary> summaries,
                          std::span<const int64_t> readback_rows);
RowRuns DecodeRankRows(const Case& c, const Plan& plan, const sut::Observation& host,
                       const RowIndex& index, size_t rank, const CaptureRows& rows,
                       int64_t first, int64_t last);

// Summarize, then DecodeSummary on the capture layer of the same rows.
Decoded Decode(const Case& c, const Plan& plan, const sut::Observation& host, uint64_t seed,
               std::span<const Readback> readback);

// Values the judge checks: every read-back row, every layer, every k.
int64_t ValuesChecked(const Plan& plan, std::span<const int64_t> readback_rows);

// The GPU's judge found no wrong value in any rank's read-back rows: then
// every capturing rank copied exactly the model's rows, and when the host
// SUT claims exactly those rows the decode is known without reading the
// rows back. nullopt: read back and Decode (a claim that differs from the
// model may still win a tie between equal fills).
std::optional<std::vector<RowRuns>> CapturedWhenAllRight(const Case& c, const Plan& plan,
                                                         const sut::Observation& host,
                                                         std::span<const int64_t> readback_rows);

// The GPU observation: the host SUT's branches, the plan's router rows and
// replay-buffer errors, the decoded captures, and in `device` what the GPU
// checked (the judge fails a wrong value the rows cannot show). `devices`:
// each rank's GPU, for the replay error's wording.
sut::Observation AssembleObservation(const Plan& plan, const sut::Observation& host,
                                     Decoded decoded, std::span<const int> devices);

}  // namespace r3::gpu

#endif  // R3_GPU_DECODE_H_
