#include "r3/gpu/decode.h"

#include <algorithm>
#include <unordered_map>

#include "r3/gpu/fill.h"

namespace r3::gpu {
namespace {

struct Identity {
  int64_t dp = RowRun::kPad;
  int64_t token = 0;
};

uint64_t RowHash(const int32_t* values, int64_t k) {
  uint64_t h = 0x243F6A8885A308D3ull;
  for (int64_t i = 0; i < k; ++i) h = Mix64(h ^ static_cast<uint32_t>(values[i]));
  return h;
}

// Every row of the step, by the hash of its fill; built only when a row does
// not match the model's expectation.
class RowIndex {
 public:
  RowIndex(const Case& c, uint64_t seed, int64_t id_space)
      : c_(c), seed_(seed), id_space_(id_space) {}

  std::optional<Identity> Find(const int32_t* values, const Identity& claim) {
    Build();
    const auto [lo, hi] = index_.equal_range(RowHash(values, c_.config.top_k));
    std::optional<Identity> found;
    for (auto it = lo; it != hi; ++it) {
      if (!Matches(values, it->second)) continue;
      if (it->second.dp == claim.dp && it->second.token == claim.token) return claim;
      if (!found) found = it->second;
    }
    return found;
  }

  bool Matches(const int32_t* values, const Identity& id) const {
    for (int64_t k = 0; k < c_.config.top_k; ++k) {
      if (values[k] != FillValue(seed_, id.dp, id.token, k, id_space_)) return false;
    }
    return true;
  }

 private:
  void Build() {
    if (built_) return;
    built_ = true;
    std::vector<int32_t> row(static_cast<size_t>(c_.config.top_k));
    for (int64_t d = 0; d < c_.config.dp; ++d) {
      for (int64_t t = 0; t < c_.step.padded[static_cast<size_t>(d)]; ++t) {
        for (int64_t k = 0; k < c_.config.top_k; ++k) {
          row[static_cast<size_t>(k)] = FillValue(seed_, d, t, k, id_space_);
        }
        index_.emplace(RowHash(row.data(), c_.config.top_k), Identity{d, t});
      }
    }
  }

  const Case& c_;
  uint64_t seed_;
  int64_t id_space_;
  bool built_ = false;
  std::unordered_multimap<uint64_t, Identity> index_;
};

// The host SUT's claim for each captured row, expanded.
Identity ClaimAt(const RowRuns& runs, int64_t row) {
  for (const RowRun& run : runs) {
    if (row < run.count) return {run.dp, run.is_pad() ? 0 : run.first + row};
    row -= run.count;
  }
  return {};
}

}  // namespace

int64_t ReadbackRows(const Plan& plan, const Case& c, size_t rank) {
  const RankPlan& r = plan.ranks[rank];
  int64_t rows = c.step.padded[static_cast<size_t>(r.dp)];
  if (r.capture) rows = std::max(rows, r.capture_end - r.capture_start);
  return std::min(plan.capturer_rows, rows + 1);
}

Decoded Decode(const Case& c, const Plan& plan, const sut::Observation& host, uint64_t seed,
               std::span<const Readback> readback) {
  const int64_t k_size = plan.top_k;
  const int64_t layers = plan.num_layers;
  Decoded out;
  out.captured.resize(plan.ranks.size());
  RowIndex index(c, seed, plan.id_space);
  std::vector<int32_t> want(static_cast<size_t>(k_size));
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    const RankPlan& r = plan.ranks[i];
    const Readback& rb = readback[i];
    const int64_t real = c.step.padded[static_cast<size_t>(r.dp)];
    // Every value read back against the model: DP rank dp's rows at the
    // capture layer, kUnwritten everywhere else.
    for (int64_t row = 0; row < rb.rows; ++row) {
      for (int64_t l = 0; l < layers; ++l) {
        const int32_t* got = rb.data + (row * layers + l) * k_size;
        for (int64_t k = 0; k < k_size; ++k) {
          const int32_t expected = (l == plan.layer && row < real)
                                       ? FillValue(seed, r.dp, row, k, plan.id_space)
                                       : kUnwritten;
          ++out.values_checked;
          if (got[k] == expected) continue;
          ++out.wrong_values;
          if (!out.first_mismatch) {
            out.first_mismatch = Mismatch{r.dp, r.tp, row, l, k, got[k], expected};
          }
        }
      }
    }
    if (!r.capture) continue;
    RowRuns& runs = out.captured[i];
    const int64_t len = r.capture_end - r.capture_start;
    const RowRuns& claims = host.ranks[i].captured;
    for (int64_t row = 0; row < len && row < rb.rows; ++row) {
      const int32_t* got = rb.data + (row * layers + plan.layer) * k_size;
      // Equal fills cannot be told apart: the host SUT's claim, then the
      // model's row, win ties.
      const Identity claim = ClaimAt(claims, row);
      Identity id;
      if (claim.dp != RowRun::kPad && index.Matches(got, claim)) {
        id = claim;
      } else if (row < real && index.Matches(got, Identity{r.dp, row})) {
        id = {r.dp, row};
      } else if (std::all_of(got, got + k_size, [](int32_t v) { return v == kPoison; })) {
        id = {};
      } else if (auto found = index.Find(got, claim)) {
        id = *found;
      }
      AppendRun(runs, {id.dp, id.dp == RowRun::kPad ? 0 : id.token, 1});
    }
  }
  return out;
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
