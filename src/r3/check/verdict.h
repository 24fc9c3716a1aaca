// The result of judging one Observation against the model: every invariant
// of the spec's section 8 that failed, and on which rank.
#ifndef R3_CHECK_VERDICT_H_
#define R3_CHECK_VERDICT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "r3/case/rows.h"

namespace r3::check {

enum class Invariant {
  kReplayFits = 1,     // kernel input fits the replay buffer
  kCapturerHolds = 2,  // L <= M
  kRowsExact = 3,      // a rank captures exactly its DP rank's N[d] rows
  kConcatGlobal = 4,   // DP captures concatenated give the global batch
  kTpAgree = 5,        // every TP rank of a DP rank captures the same rows
  kDtype = 6,          // expert ids survive int16 and the snapshot dtype
  kGatherSize = 7,     // gathered size and local_sizes as the spec says
};

inline constexpr int kNumInvariants = 7;

std::string_view InvariantName(Invariant inv);

// Which buffer's dtype a kDtype violation is about. Known findings match on
// this, never on the message text.
enum class DtypeBuffer { kNone, kReplay, kSnapshot };

struct Violation {
  Invariant invariant = Invariant::kRowsExact;
  int64_t dp = -1;  // -1: not tied to one DP rank
  int64_t tp = -1;  // -1: not tied to one TP rank
  std::string message;
  bool has_rows = false;  // captured/expected below are meaningful
  RowRuns captured;
  RowRuns expected;
  DtypeBuffer dtype = DtypeBuffer::kNone;  // set on kDtype violations only
};

struct Verdict {
  std::vector<Violation> violations;
  bool ok() const { return violations.empty(); }
  bool Violates(Invariant inv) const {
    for (const Violation& v : violations) {
      if (v.invariant == inv) return true;
    }
    return false;
  }
};

}  // namespace r3::check

#endif  // R3_CHECK_VERDICT_H_
