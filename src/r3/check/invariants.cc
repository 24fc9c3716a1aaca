#include "r3/check/invariants.h"

#include <string>

#include "r3/case/checked_math.h"
#include "r3/model/sizing.h"

namespace r3::check {
namespace {

// Runs a violation message lists before "... and N more runs": a scattered
// capture has a run per row (the verdict's JSON keeps every run).
constexpr size_t kMessageRuns = 32;

std::string RankName(int64_t dp, int64_t tp) {
  return "dp" + std::to_string(dp) + "/tp" + std::to_string(tp);
}

std::string SizesText(const std::optional<std::vector<int64_t>>& sizes) {
  if (!sizes) return "unset";
  std::string out = "[";
  for (size_t i = 0; i < sizes->size(); ++i) {
    if (i > 0) out += ", ";
    if (i == 16 && sizes->size() > 20) {
      out += "... (" + std::to_string(sizes->size()) + " values)";
      break;
    }
    out += std::to_string((*sizes)[i]);
  }
  return out + "]";
}

class Judge {
 public:
  Judge(const Case& c, const model::Layout& layout, const sut::Observation& obs)
      : c_(c), layout_(layout), obs_(obs), dp_(c.config.dp), tp_(c.config.tp) {}

  Verdict Run() {
    if (obs_.ranks.size() != layout_.ranks.size()) {
      AddPlain(Invariant::kGatherSize, -1, -1,
           "observation has " + std::to_string(obs_.ranks.size()) + " ranks, the case has " +
               std::to_string(layout_.ranks.size()));
      return std::move(verdict_);
    }
    GatherSizes();
    ReplayFits();
    CapturerHolds();
    RowsExact();
    ConcatGlobal();
    TpAgree();
    Dtypes();
    return std::move(verdict_);
  }

 private:
  void Add(Violation v) { verdict_.violations.push_back(std::move(v)); }
  void AddPlain(Invariant inv, int64_t dp, int64_t tp, std::string message) {
    Violation v;
    v.invariant = inv;
    v.dp = dp;
    v.tp = tp;
    v.message = std::move(message);
    Add(std::move(v));
  }

  const sut::RankObservation& Obs(int64_t d, int64_t t) const {
    return obs_.ranks[static_cast<size_t>(d * tp_ + t)];
  }

  void GatherSizes() {
    if (obs_.local_sizes != layout_.local_sizes) {
      AddPlain(Invariant::kGatherSize, -1, -1,
           "local_sizes is " + SizesText(obs_.local_sizes) + ", expected " +
               SizesText(layout_.local_sizes));
    }
    for (const model::RankLayout& r : layout_.ranks) {
      const sut::RankObservation& o = Obs(r.dp, r.tp);
      if (o.n != r.n) {
        AddPlain(Invariant::kGatherSize, r.dp, r.tp,
             RankName(r.dp, r.tp) + " received " + std::to_string(o.n) +
                 " rows of topk_ids, expected " + std::to_string(r.n) + " (gather group " +
                 std::string(model::GatherGroupName(layout_.group)) + ")");
      }
    }
  }

  void ReplayFits() {
    for (const model::RankLayout& r : layout_.ranks) {
      const sut::RankObservation& o = Obs(r.dp, r.tp);
      const int64_t n = std::max(o.n, r.n);
      // An engine's own sizing code reports each rank's buffer.
      const int64_t rows = o.replay_rows >= 0 ? o.replay_rows : obs_.replay_rows;
      const bool short_slice = o.kernel_slice_rows >= 0 && o.kernel_slice_rows < n;
      if (n <= rows && !short_slice && o.replay_error.empty()) continue;  // most ranks
      const std::string slice =
          short_slice ? "the kernel got a slice of " + std::to_string(o.kernel_slice_rows) +
                            " rows for its " + std::to_string(n) + " input rows"
                      : "";
      const std::string where = " the replay buffer of " + std::to_string(rows) + " rows (policy " +
                                obs_.policy + ", exact bound " +
                                std::to_string(model::RequiredReplayRows(c_.config)) + ")";
      if (n > rows) {
        AddPlain(Invariant::kReplayFits, r.dp, r.tp,
                 RankName(r.dp, r.tp) + ": kernel input of " + std::to_string(n) +
                     " rows does not fit" + where +
                     (short_slice ? "; " + slice + ": the sink buffer is too small and nothing raised"
                      : o.replay_error.empty()
                          ? "; the SUT did not notice: out-of-bounds write"
                          : "; " + o.replay_error));
      } else if (short_slice) {
        AddPlain(Invariant::kReplayFits, r.dp, r.tp,
                 RankName(r.dp, r.tp) + ": " + slice + " out of" + where +
                     ": the hand-off cut it short and nothing raised");
      } else if (!o.replay_error.empty()) {
        AddPlain(Invariant::kReplayFits, r.dp, r.tp,
                 RankName(r.dp, r.tp) + ": kernel input of " + std::to_string(n) + " rows fits" +
                     where + ", but the buffer check raised " + o.replay_error);
      }
    }
  }

  void CapturerHolds() {
    for (int64_t d = 0; d < dp_; ++d) {
      const int64_t l = c_.step.padded[static_cast<size_t>(d)];
      if (l > obs_.capturer_rows) {
        AddPlain(Invariant::kCapturerHolds, d, -1,
             "dp" + std::to_string(d) + ": L=" + std::to_string(l) +
                 " rows exceed the capturer buffer of " + std::to_string(obs_.capturer_rows));
      }
    }
  }

  void RowsExact() {
    for (const model::RankLayout& r : layout_.ranks) {
      const sut::RankObservation& o = Obs(r.dp, r.tp);
      if (o.error.empty() && o.stray_rows == 0 && o.captured == r.expected) continue;
      Violation v{Invariant::kRowsExact, r.dp, r.tp, "", true, o.captured, r.expected};
      // Appended in place: every failing rank of a scattered capture has one.
      std::string& m = v.message;
      m.reserve(96 + 2 * 16 * kMessageRuns);
      m += RankName(r.dp, r.tp);
      m += " (branch ";
      m += sut::BranchName(o.branch);
      m += ", n=";
      m += std::to_string(o.n);
      m += ") ";
      if (o.error.empty()) {
        m += "captured ";
        AppendDescribedRuns(m, o.captured, kMessageRuns);
      } else {
        m += "raised ";
        m += o.error;
      }
      if (o.stray_rows != 0) {
        m += " and wrote ";
        m += std::to_string(o.stray_rows);
        m += " stray or undecodable row(s)";
      }
      m += ", expected ";
      AppendDescribedRuns(m, r.expected, kMessageRuns);
      Add(std::move(v));
    }
  }

  void ConcatGlobal() {
    RowRuns global;
    for (int64_t d = 0; d < dp_; ++d) AppendRun(global, {d, 0, c_.step.padded[d]});
    for (int64_t t = 0; t < tp_; ++t) {
      RowRuns joined;
      for (int64_t d = 0; d < dp_; ++d) AppendRuns(joined, Obs(d, t).captured);
      if (joined == global) continue;
      std::string m = "tp" + std::to_string(t) + ": captures of all DP ranks joined give ";
      AppendDescribedRuns(m, joined, kMessageRuns);
      m += ", expected the global batch ";
      AppendDescribedRuns(m, global, kMessageRuns);
      Add({Invariant::kConcatGlobal, -1, t, std::move(m), true, std::move(joined), global});
    }
  }

  void TpAgree() {
    for (int64_t d = 0; d < dp_; ++d) {
      const sut::RankObservation& first = Obs(d, 0);
      for (int64_t t = 1; t < tp_; ++t) {
        const sut::RankObservation& o = Obs(d, t);
        if (o.captured == first.captured && o.error == first.error) continue;
        Violation v{Invariant::kTpAgree, d, t, "", true, o.captured, first.captured};
        v.message = RankName(d, t) + " captured " +
                    (o.error.empty() ? DescribeRuns(o.captured, kMessageRuns) : "nothing (" + o.error + ")") +
                    " but " + RankName(d, 0) + " captured " +
                    (first.error.empty() ? DescribeRuns(first.captured, kMessageRuns)
                                         : "nothing (" + first.error + ")");
        Add(std::move(v));
      }
    }
  }

  void Dtypes() {
    const int64_t max_id = c_.config.num_experts - 1;
    if (max_id > obs_.replay_max_id) {
      AddDtype(DtypeBuffer::kReplay, max_id, "replay", obs_.replay_dtype, obs_.replay_max_id);
    }
    if (max_id > obs_.snapshot_max_id) {
      AddDtype(DtypeBuffer::kSnapshot, max_id, "snapshot", obs_.snapshot_dtype,
               obs_.snapshot_max_id);
    }
  }

  void AddDtype(DtypeBuffer buffer, int64_t max_id, const std::string& what,
                const std::string& dtype, int64_t dtype_max) {
    Violation v;
    v.invariant = Invariant::kDtype;
    v.dtype = buffer;
    v.message = "expert id " + std::to_string(max_id) + " does not fit the " + what + " dtype " +
                dtype + " (max " + std::to_string(dtype_max) + ")";
    Add(std::move(v));
  }

  const Case& c_;
  const model::Layout& layout_;
  const sut::Observation& obs_;
  int64_t dp_;
  int64_t tp_;
  Verdict verdict_;
};

}  // namespace

std::string_view InvariantName(Invariant inv) {
  switch (inv) {
    case Invariant::kReplayFits: return "replay-fits";
    case Invariant::kCapturerHolds: return "capturer-holds";
    case Invariant::kRowsExact: return "rows-exact";
    case Invariant::kConcatGlobal: return "concat-global";
    case Invariant::kTpAgree: return "tp-agree";
    case Invariant::kDtype: return "dtype";
    case Invariant::kGatherSize: return "gather-size";
  }
  return "?";
}

Verdict CheckInvariants(const Case& c, const model::Layout& layout, const sut::Observation& obs) {
  return Judge(c, layout, obs).Run();
}

}  // namespace r3::check
