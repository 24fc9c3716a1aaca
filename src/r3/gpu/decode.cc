#include "r3/gpu/decode.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "r3/gpu/fill.h"

namespace r3::gpu {
namespace {

// The host SUT's claim for captured rows 0, 1, 2, ... in turn: a cursor, not
// a walk from the first run for every row (a scattered claim has many runs).
class ClaimCursor {
 public:
  explicit ClaimCursor(const RowRuns& runs) : runs_(runs) { Enter(); }

  // Starts at captured row `row`: a chunk of a rank's rows decodes on its
  // own thread.
  ClaimCursor(const RowRuns& runs, int64_t row) : runs_(runs) {
    Enter();
    while (run_ < runs_.size() && row >= run_rows_) {
      row -= run_rows_;
      ++run_;
      Enter();
    }
    at_ = run_ < runs_.size() ? row : 0;
  }

  // The next row's claim; padding past the claimed rows.
  Identity Next() {
    while (run_ < runs_.size() && at_ == run_rows_) {
      ++run_;
      at_ = 0;
      Enter();
    }
    if (run_ == runs_.size()) return {};
    const RowAtResult row = RowAt(runs_[run_], at_++);
    return {row.dp, row.token};
  }

 private:
  void Enter() { run_rows_ = run_ < runs_.size() ? RowsOf(runs_[run_]) : 0; }

  const RowRuns& runs_;
  size_t run_ = 0;
  int64_t run_rows_ = 0;  // RowsOf(runs_[run_])
  int64_t at_ = 0;        // rows of runs_[run_] already claimed
};

// Whether a captured row holds the claim's values. The device's lookup
// answers without the fills when it found the claim itself, or found that
// no row of the step has these values (and the claim is a row of the step).
bool ClaimMatches(const RowIndex& index, const CaptureRows& rows, int64_t row, const int32_t* got,
                  const Identity& claim) {
  if (rows.found != nullptr && rows.found[row] >= 0 && PackedDp(rows.found[row]) == claim.dp &&
      PackedToken(rows.found[row]) == claim.token) {
    return true;
  }
  if (rows.found != nullptr && rows.found[row] == kNoStepRow && index.IsStepRow(claim)) {
    return false;
  }
  return index.Matches(got, claim);
}

// A captured row that is neither its claim, the model's row nor padding:
// the device's answer when it has one, else the host's index.
std::optional<Identity> Lookup(const RowIndex& index, const CaptureRows& rows, int64_t row,
                               const int32_t* got, const Identity& claim) {
  if (rows.found != nullptr && rows.found[row] != kAskTheHost) {
    if (rows.found[row] == kNoStepRow) return std::nullopt;
    return Identity{PackedDp(rows.found[row]), PackedToken(rows.found[row])};
  }
  return index.Find(got, claim);
}

}  // namespace

RowIndex::RowIndex(const Case& c, uint64_t seed, int64_t id_space)
    : c_(c), seed_(seed), id_space_(id_space) {}

std::optional<Identity> RowIndex::Find(const int32_t* values, const Identity& claim) const {
  std::call_once(built_, [this] { Build(); });
  const auto at = index_.find(RowHash(values, c_.config.top_k));
  if (at == index_.end()) return std::nullopt;
  if (IsStepRow(claim) && Matches(values, claim)) return claim;
  const std::vector<Identity>& same = at->second;
  for (auto it = same.rbegin(); it != same.rend(); ++it) {
    if (Matches(values, *it)) return *it;
  }
  return std::nullopt;
}

bool RowIndex::IsStepRow(const Identity& id) const {
  return id.dp >= 0 && id.dp < c_.config.dp && id.token >= 0 &&
         id.token < c_.step.padded[static_cast<size_t>(id.dp)];
}

bool RowIndex::Matches(const int32_t* values, const Identity& id) const {
  for (int64_t k = 0; k < c_.config.top_k; ++k) {
    if (values[k] != FillValue(seed_, id.dp, id.token, k, id_space_)) return false;
  }
  return true;
}

void RowIndex::Build() const {
  std::vector<int32_t> row(static_cast<size_t>(c_.config.top_k));
  for (int64_t d = 0; d < c_.config.dp; ++d) {
    for (int64_t t = 0; t < c_.step.padded[static_cast<size_t>(d)]; ++t) {
      for (int64_t k = 0; k < c_.config.top_k; ++k) {
        row[static_cast<size_t>(k)] = FillValue(seed_, d, t, k, id_space_);
      }
      index_[RowHash(row.data(), c_.config.top_k)].push_back(Identity{d, t});
    }
  }
}

int64_t ReadbackRows(const Plan& plan, const Case& c, size_t rank) {
  const RankPlan& r = plan.ranks[rank];
  int64_t rows = c.step.padded[static_cast<size_t>(r.dp)];
  if (r.capture) rows = std::max(rows, r.capture_end - r.capture_start);
  return std::min(plan.capturer_rows, rows + 1);
}

std::vector<RankSummary> Summarize(const Case& c, const Plan& plan, uint64_t seed,
                                   std::span<const Readback> readback) {
  const int64_t k_size = plan.top_k;
  const int64_t layers = plan.num_layers;
  std::vector<RankSummary> out(plan.ranks.size());
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankPlan& r = plan.ranks[i];
    const Readback& rb = readback[i];
    const int64_t real = c.step.padded[static_cast<size_t>(r.dp)];
    out[i].written_rows = 0;
    // Every value read back against the model: DP rank dp's rows at the
    // capture layer, kUnwritten everywhere else.
    for (int64_t at = 0; at < rb.rows * layers * k_size; ++at) {
      const int64_t row = at / (layers * k_size);
      const int64_t l = at / k_size % layers;
      if (l == plan.layer && rb.data[at] != kUnwritten) out[i].written_rows = row + 1;
      const int32_t expected = (l == plan.layer && row < real)
                                   ? FillValue(seed, r.dp, row, at % k_size, plan.id_space)
                                   : kUnwritten;
      if (rb.data[at] == expected) continue;
      if (out[i].wrong_values++ == 0) {
        out[i].first_index = at;
        out[i].first_got = rb.data[at];
      }
    }
  }
  return out;
}

int64_t CaptureRowsOf(const Plan& plan, size_t rank, int64_t readback_rows) {
  const RankPlan& r = plan.ranks[rank];
  if (!r.capture) return 0;
  return std::max<int64_t>(0, std::min(r.capture_end - r.capture_start, readback_rows));
}

int64_t DecodedRowsOf(const RankSummary& summary, int64_t capture_rows) {
  return summary.written_rows < 0 ? capture_rows : std::min(capture_rows, summary.written_rows);
}

Decoded DecodeSummaryOnly(const Case& c, const Plan& plan, uint64_t seed,
                          std::span<const RankSummary> summaries,
                          std::span<const int64_t> readback_rows) {
  const int64_t k_size = plan.top_k;
  const int64_t layers = plan.num_layers;
  Decoded out;
  out.captured.resize(plan.ranks.size());
  out.values_checked = ValuesChecked(plan, readback_rows);
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankPlan& r = plan.ranks[i];
    const RankSummary& s = summaries[i];
    const int64_t real = c.step.padded[static_cast<size_t>(r.dp)];
    out.wrong_values += s.wrong_values;
    if (s.wrong_values > 0 && !out.first_mismatch) {
      const int64_t row = s.first_index / (layers * k_size);
      const int64_t l = s.first_index / k_size % layers;
      const int64_t k = s.first_index % k_size;
      const int32_t expected = (l == plan.layer && row < real)
                                   ? FillValue(seed, r.dp, row, k, plan.id_space)
                                   : kUnwritten;
      out.first_mismatch = Mismatch{r.dp, r.tp, row, l, k, s.first_got, expected};
    }
  }
  return out;
}

RowRuns DecodeRankRows(const Case& c, const Plan& plan, const sut::Observation& host,
                       const RowIndex& index, size_t rank, const CaptureRows& rows,
                       int64_t first, int64_t last) {
  const int64_t k_size = plan.top_k;
  const RankPlan& r = plan.ranks[rank];
  const int64_t real = c.step.padded[static_cast<size_t>(r.dp)];
  RowRuns runs;
  if (!r.capture) return runs;
  ClaimCursor claim_at(host.ranks[rank].captured, first);
  // Rows are gathered into runs before they are appended: padding rows are
  // counted, and rows of one DP rank at one token step make one run (the
  // step set by its second row). AppendRun of such a run appends its rows
  // one by one, so the list is the same as one AppendRun per row, without a
  // call for each row of a long unwritten tail or a scattered capture.
  int64_t pads = 0;
  RowRun pending;  // rows of the step not yet appended; count 0: none
  const auto flush = [&runs, &pending] {
    AppendRun(runs, pending);
    pending.count = 0;
  };
  for (int64_t row = first; row < last; ++row) {
    const int32_t* got = rows.data + row * k_size;
    // Equal fills cannot be told apart: the host SUT's claim, then the
    // model's row, win ties.
    const Identity claim = claim_at.Next();
    // The device has compared the row with the model's; Matches would
    // say the same.
    const bool is_model = rows.found != nullptr
                              ? rows.found[row] == kModelRow
                              : row < real && index.Matches(got, Identity{r.dp, row});
    const bool claim_is_model = claim.dp == r.dp && claim.token == row && row < real;
    Identity id;
    if (claim.dp != RowRun::kPad &&
        (claim_is_model ? is_model : ClaimMatches(index, rows, row, got, claim))) {
      id = claim;
    } else if (is_model) {
      id = {r.dp, row};
    } else if (rows.found != nullptr && rows.found[row] != kAskTheHost) {
      // The device's lookup: a row of the step (whose fills are never
      // poison), or none (padding), which is what the poison test and the
      // lookup below would say, without reading the row's values.
      if (rows.found[row] >= 0) id = {PackedDp(rows.found[row]), PackedToken(rows.found[row])};
    } else if (std::all_of(got, got + k_size, [](int32_t v) { return v == kPoison; })) {
      id = {};
    } else if (auto found = Lookup(index, rows, row, got, claim)) {
      id = *found;
    }
    if (id.dp == RowRun::kPad) {
      if (pending.count > 0) flush();
      ++pads;
      continue;
    }
    if (pads > 0) {
      AppendRun(runs, {RowRun::kPad, 0, pads});
      pads = 0;
    }
    if (pending.count > 0 && id.dp == pending.dp) {
      if (pending.count == 1) {
        pending.stride = id.token - pending.first;
        pending.count = 2;
        continue;
      }
      if (id.token == TokenAt(pending, pending.count - 1) + pending.stride) {
        ++pending.count;
        continue;
      }
    }
    // A scattered capture (rows at a wrong stride) folds into strided runs.
    if (pending.count > 0) flush();
    pending = {id.dp, id.token, 1};
  }
  if (pending.count > 0) flush();
  AppendRun(runs, {RowRun::kPad, 0, pads});
  return runs;
}

Decoded DecodeSummary(const Case& c, const Plan& plan, const sut::Observation& host,
                      uint64_t seed, std::span<const RankSummary> summaries,
                      std::span<const int64_t> readback_rows,
                      std::span<const CaptureRows> capture_rows) {
  Decoded out = DecodeSummaryOnly(c, plan, seed, summaries, readback_rows);
  const RowIndex index(c, seed, plan.id_space);
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const int64_t rows = capture_rows[i].rows;
    const int64_t read = DecodedRowsOf(summaries[i], rows);
    out.captured[i] = DecodeRankRows(c, plan, host, index, i, capture_rows[i], 0, read);
    if (plan.ranks[i].capture) AppendRun(out.captured[i], {RowRun::kPad, 0, rows - read});
  }
  return out;
}

Decoded Decode(const Case& c, const Plan& plan, const sut::Observation& host, uint64_t seed,
               std::span<const Readback> readback) {
  const std::vector<RankSummary> summaries = Summarize(c, plan, seed, readback);
  std::vector<int64_t> rows;
  std::vector<std::vector<int32_t>> layer_rows(plan.ranks.size());
  std::vector<CaptureRows> capture_rows;
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const Readback& rb = readback[i];
    rows.push_back(rb.rows);
    const int64_t n = CaptureRowsOf(plan, i, rb.rows);
    layer_rows[i].reserve(static_cast<size_t>(n * plan.top_k));
    for (int64_t row = 0; row < n; ++row) {
      const int32_t* at = rb.data + (row * plan.num_layers + plan.layer) * plan.top_k;
      layer_rows[i].insert(layer_rows[i].end(), at, at + plan.top_k);
    }
    capture_rows.push_back({layer_rows[i].data(), n});
  }
  return DecodeSummary(c, plan, host, seed, summaries, rows, capture_rows);
}

int64_t ValuesChecked(const Plan& plan, std::span<const int64_t> readback_rows) {
  int64_t values = 0;
  for (const int64_t rows : readback_rows) values += rows * plan.num_layers * plan.top_k;
  return values;
}

std::optional<std::vector<RowRuns>> CapturedWhenAllRight(const Case& c, const Plan& plan,
                                                         const sut::Observation& host,
                                                         std::span<const int64_t> readback_rows) {
  std::vector<RowRuns> captured(plan.ranks.size());
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankPlan& r = plan.ranks[i];
    if (!r.capture) continue;
    // Decode reads the slice's rows up to the read-back extent; all right
    // means each is the model's row of DP rank dp.
    const int64_t rows = std::min(r.capture_end - r.capture_start, readback_rows[i]);
    if (rows > c.step.padded[static_cast<size_t>(r.dp)]) return std::nullopt;
    if (rows > 0) AppendRun(captured[i], {r.dp, 0, rows});
    if (host.ranks[i].captured != captured[i]) return std::nullopt;
  }
  return captured;
}

sut::Observation AssembleObservation(const Plan& plan, const sut::Observation& host,
                                     Decoded decoded, std::span<const int> devices) {
  sut::Observation obs = host;
  obs.kernel_rows = 0;
  for (size_t i = 0; i < obs.ranks.size(); ++i) {
    sut::RankObservation& r = obs.ranks[i];
    const RankPlan& p = plan.ranks[i];
    r.n = p.n;
    obs.kernel_rows = std::max(obs.kernel_rows, p.n);
    const std::string dev = "cuda:" + std::to_string(devices[i]);
    r.replay_error = p.replay_ok ? std::string()
                                 : "ValueError: Routing replay buffer was initialized for " +
                                       std::to_string(plan.replay_rows) + " tokens on " + dev +
                                       ", but the kernel received " + std::to_string(p.n) +
                                       " tokens on " + dev + ".";
    r.captured = std::move(decoded.captured[i]);
    if (!p.error.empty()) {
      r.branch = sut::Branch::kError;
      r.error = p.error;
    }
  }
  sut::DeviceCheck& device = obs.device.emplace();
  device.layer = plan.layer;
  device.steps = 1;
  device.values_checked = decoded.values_checked;
  device.wrong_values = decoded.wrong_values;
  device.first_mismatch = decoded.first_mismatch;
  device.step_wrong_values = decoded.wrong_values;
  device.step_first_mismatch = decoded.first_mismatch;
  return obs;
}

}  // namespace r3::gpu
