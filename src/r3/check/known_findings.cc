#include "r3/check/known_findings.h"

#include <array>


namespace r3::check {
namespace {

bool InternalSp(const Case& c) {
  return c.config.dispatch == Dispatch::kInternal && SpEnabled(c.config);
}

const sut::RankObservation& Rank(const Case& c, const sut::Observation& obs, int64_t d,
                                 int64_t t) {
  return obs.ranks.at(static_cast<size_t>(d * c.config.tp + t));
}

// DP rank d's own rows, the capture every one of its TP ranks must make.
RowRuns OwnRows(const Case& c, int64_t d) {
  RowRuns rows;
  AppendRun(rows, {d, 0, c.step.padded[static_cast<size_t>(d)]});
  return rows;
}

// Under SP with internal dispatch a DP rank with one row (a decode step)
// has shards of one row: TP rank 0 holds the token, the others a padding
// row. n == L == 1 matches the `local` branch (or `naive-dp` when every
// other DP rank is empty) before `sp-tp-gather`, so no TP all-gather runs
// and TP ranks > 0 capture their padding row. Matched on the rank's shape
// (TP rank > 0, N[d] == 1, that branch, no error, exactly one SP padding
// row captured), so the same invariant failing for another cause is not
// taken for it. A violation that names no rank of the case (dp or tp out of
// range) is none; the lookups below use at(), so reading past the ranks
// throws rather than matching a neighbour's row.
bool PadRowTakenForBatch(const Case& c, const sut::Observation& obs, int64_t d, int64_t t) {
  if (d < 0 || t <= 0 || d >= c.config.dp || t >= c.config.tp) return false;
  const sut::RankObservation& r = Rank(c, obs, d, t);
  return c.step.padded.at(static_cast<size_t>(d)) == 1 && r.n == 1 && r.error.empty() &&
         r.stray_rows == 0 &&
         (r.branch == sut::Branch::kLocal || r.branch == sut::Branch::kNaiveDp) &&
         r.captured.size() == 1 && r.captured[0].is_pad() && r.captured[0].count == 1;
}

bool ShardTakenForBatch(const Case& c, const sut::Observation& obs, const Violation& v) {
  if (!InternalSp(c) || obs.ranks.size() != static_cast<size_t>(c.config.dp * c.config.tp)) {
    return false;
  }
  switch (v.invariant) {
    case Invariant::kRowsExact:
    case Invariant::kTpAgree:
      return PadRowTakenForBatch(c, obs, v.dp, v.tp);
    case Invariant::kConcatGlobal: {
      // Explained only when every DP rank's capture on this TP rank is
      // either right or this finding's padding row.
      bool any = false;
      for (int64_t d = 0; d < c.config.dp; ++d) {
        if (PadRowTakenForBatch(c, obs, d, v.tp)) {
          any = true;
        } else if (v.tp < 0 || Rank(c, obs, d, v.tp).captured != OwnRows(c, d)) {
          return false;
        }
      }
      return any;
    }
    default:
      return false;
  }
}

// The monolithic kernel's replay buffer is int16: expert ids past 32767
// wrap. Only models with more than 32768 experts are affected; the snapshot
// dtype is not part of this finding.
bool ReplayInt16Overflow(const Case& c, const sut::Observation& obs, const Violation& v) {
  return v.invariant == Invariant::kDtype && v.dtype == DtypeBuffer::kReplay &&
         obs.replay_dtype == "int16" && c.config.num_experts > 32768;
}

constexpr std::array<KnownFinding, 2> kFindings = {{
    {"internal-sp-decode-pad",
     "internal dispatch + SP, a DP rank with N[d] == 1: TP ranks > 0 capture an SP padding "
     "row (branch local/naive-dp wins before sp-tp-gather)",
     ShardTakenForBatch},
    {"replay-int16-experts",
     "num_experts > 32768: expert ids do not fit the int16 replay buffer", ReplayInt16Overflow},
}};

}  // namespace

std::span<const KnownFinding> KnownFindings() { return kFindings; }

const KnownFinding* ExplainViolation(const Case& c, const sut::Observation& obs,
                                     const Violation& v) {
  for (const KnownFinding& f : kFindings) {
    if (f.matches(c, obs, v)) return &f;
  }
  return nullptr;
}

}  // namespace r3::check
