#include "r3/check/known_findings.h"

#include <array>

#include "r3/model/sequence_parallel.h"

namespace r3::check {
namespace {

bool InternalSp(const Case& c) {
  return c.config.dispatch == Dispatch::kInternal && model::SpEnabled(c.config);
}

// Under SP with internal dispatch a DP rank with one row (a decode step)
// has shards of one row: TP rank 0 holds the token, the others a padding
// row. n == L == 1 matches the `local` branch (or `naive-dp` when every
// other DP rank is empty) before `sp-tp-gather`, so no TP all-gather runs
// and TP ranks > 0 capture their padding row.
bool ShardTakenForBatch(const Case& c, const sut::Observation& obs, const Violation& v) {
  if (!InternalSp(c)) return false;
  auto coincidental = [&](int64_t d, int64_t t) {
    const sut::RankObservation& r = obs.ranks[static_cast<size_t>(d * c.config.tp + t)];
    return t > 0 && c.step.padded[static_cast<size_t>(d)] == 1 &&
           (r.branch == sut::Branch::kLocal || r.branch == sut::Branch::kNaiveDp);
  };
  switch (v.invariant) {
    case Invariant::kRowsExact:
    case Invariant::kTpAgree:
      return coincidental(v.dp, v.tp);
    case Invariant::kConcatGlobal:
      for (int64_t d = 0; d < c.config.dp; ++d) {
        if (coincidental(d, v.tp)) return true;
      }
      return false;
    default:
      return false;
  }
}

// The monolithic kernel's replay buffer is int16: expert ids past 32767
// wrap. Only models with more than 32768 experts are affected.
bool ReplayInt16Overflow(const Case& c, const sut::Observation& obs, const Violation& v) {
  return v.invariant == Invariant::kDtype && c.config.num_experts - 1 > obs.replay_max_id &&
         obs.replay_dtype == "int16" && v.message.find("replay dtype") != std::string::npos;
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
