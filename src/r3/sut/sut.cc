#include "r3/sut/sut.h"

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "r3/case/checked_math.h"

namespace r3::sut {
namespace {

constexpr std::array<SutInfo, 2> kSuts = {{
    {Version::kPost50874, "vllm-post-50874",
     "vLLM after #50874: no-dp, naive-dp, local, ep-sp-shards, sp-tp-gather (default)"},
    {Version::kPre50874, "vllm-pre-50874", "vLLM before #50874: no ep-sp-shards branch"},
}};

std::string DimError(int64_t n, int64_t total, int64_t l, const std::optional<int64_t>& gathered,
                     int64_t sp_expected, int64_t d, int64_t tp) {
  return "AssertionError: RoutedExpertsCapturer: unexpected topk_ids batch dim " +
         std::to_string(n) + " (expected " + std::to_string(total) + ", " + std::to_string(l) +
         ", " + (gathered ? std::to_string(*gathered) : std::string("None")) + ", or " +
         std::to_string(sp_expected) + " for dp_rank=" + std::to_string(d) +
         ", tp_size=" + std::to_string(tp) + ")";
}

std::vector<int64_t> Prefix(const std::vector<int64_t>& values) {
  std::vector<int64_t> prefix(values.size() + 1, 0);
  for (size_t i = 0; i < values.size(); ++i) prefix[i + 1] = CheckedAdd(prefix[i], values[i]);
  return prefix;
}

void SetSnapshotDtype(const Config& cfg, const MutantSet& mut, Observation& obs) {
  if (cfg.num_experts <= 256) {
    const bool int8 = mut.has(Mutant::kSnapshotInt8);
    obs.snapshot_dtype = int8 ? "int8" : "uint8";
    obs.snapshot_max_id = int8 ? 127 : 255;
  } else if (cfg.num_experts <= 65536) {
    obs.snapshot_dtype = "uint16";
    obs.snapshot_max_id = 65535;
  } else {
    obs.snapshot_dtype = "int32";
    obs.snapshot_max_id = 2147483647;
  }
}

// Rows [start, end) of runs, clamped to them (start may be negative):
// RowTensor::Slice without the index, for a rank's own one or two runs.
RowRuns SliceRuns(const RowRuns& runs, int64_t start, int64_t end) {
  RowRuns out;
  int64_t begin = 0;
  for (const RowRun& run : runs) {
    const int64_t run_end = CheckedAdd(begin, RowsOf(run));
    // AppendRunRows clamps the piece to the run (an empty one adds nothing).
    AppendRunRows(out, run, start - begin, end - begin);
    begin = run_end;
  }
  return out;
}

// What a rank's capture reads: its gather group's indexed tensor, or its own
// runs.
struct Routed {
  const RowTensor* tensor;
  const RowRuns* own;
  RowRuns Slice(int64_t start, int64_t end) const {
    return tensor != nullptr ? tensor->Slice(start, end) : SliceRuns(*own, start, end);
  }
};

// One step of vLLM's capture for every rank of a case, on a dispatch plan.
class CaptureRun {
 public:
  CaptureRun(const Case& c, const SutOptions& options)
      : c_(c), cfg_(c.config), opt_(options), mut_(options.mutants),
        plan_(PlanDispatch(c, options.mutants)) {}

  Observation Run() {
    if (!plan_.error.empty()) throw std::runtime_error(plan_.error);
    if (plan_.local_sizes) prefix_local_ = Prefix(*plan_.local_sizes);
    prefix_tokens_ = Prefix(num_tokens_);
    IndexRoutedTensors();

    Observation obs = ObserveDispatch(c_, opt_, plan_, Capturer::kBuiltIn);
    capturer_rows_ = obs.capturer_rows;
    for (int64_t d = 0; d < cfg_.dp; ++d) {
      for (int64_t t = 0; t < cfg_.tp; ++t) Capture(obs.ranks[Index(d, t)]);
      CheckTpCollective(obs, d);
    }
    return obs;
  }

 private:
  size_t Index(int64_t d, int64_t t) const { return static_cast<size_t>(d * cfg_.tp + t); }

  Routed RoutedTo(size_t index) const {
    const int group = plan_.ranks[index].group;
    if (group < 0) return {nullptr, &plan_.ranks[index].local};
    return {&group_tensors_[static_cast<size_t>(group)], nullptr};
  }

  // Ranks that see the same gathered batch share its group's indexed tensor,
  // so a 64K-rank case does not re-index the batch once per rank. A rank
  // outside any group sees its own one or two runs, sliced as they are.
  void IndexRoutedTensors() {
    for (const GatherGroup& g : plan_.groups) group_tensors_.emplace_back(g.rows);
  }

  void Capture(RankObservation& r) {
    const int64_t d = r.dp;
    const int64_t n = r.n;
    const Routed topk = RoutedTo(Index(d, r.tp));
    if (cfg_.dp == 1) {
      r.branch = Branch::kNoDp;
      Write(r, topk, 0, n);
      return;
    }
    const int64_t l = num_tokens_[d];
    const int64_t total = prefix_tokens_.back();
    const int64_t gathered = prefix_local_.back();
    const bool shards_first = mut_.has(Mutant::kShardsBeforeNaiveDp);
    const bool has_shards_branch = opt_.version == Version::kPost50874;

    if (shards_first && has_shards_branch && n == gathered) return ShardsBranch(r, topk, l);
    if (n == total) {
      r.branch = Branch::kNaiveDp;
      int64_t end = prefix_tokens_[static_cast<size_t>(d + 1)];
      if (mut_.has(Mutant::kNaiveDpEndOffByOne)) end -= 1;
      Write(r, topk, end - l, end);
      return;
    }
    if (n == l) {
      r.branch = Branch::kLocal;
      Write(r, topk, 0, l);
      return;
    }
    if (!shards_first && has_shards_branch && n == gathered) return ShardsBranch(r, topk, l);
    const int64_t sp_expected = (l + cfg_.tp - 1) / cfg_.tp;
    if (cfg_.tp > 1 && n != l && n == sp_expected) {
      r.branch = Branch::kSpTpGather;
      RowRuns all;
      for (int64_t t = 0; t < cfg_.tp; ++t) AppendRuns(all, plan_.Routed(Index(d, t)));
      const RowTensor gathered_tp(std::move(all));
      Write(r, {&gathered_tp, nullptr}, 0,
            mut_.has(Mutant::kSpTpGatherNoTrim) ? gathered_tp.rows() : l);
      return;
    }
    r.branch = Branch::kError;
    r.error = DimError(n, total, l,
                       has_shards_branch ? std::optional<int64_t>(gathered) : std::nullopt,
                       sp_expected, d, cfg_.tp);
  }

  void ShardsBranch(RankObservation& r, const Routed& topk, int64_t l) {
    const auto len = static_cast<int64_t>(plan_.local_sizes->size());
    const bool ok = mut_.has(Mutant::kLocalSizesLenEqDp) ? len == cfg_.dp : len % cfg_.dp == 0;
    if (!ok) {
      r.branch = Branch::kError;
      r.error = "AssertionError: len(local_sizes)=" + std::to_string(len) +
                " does not fit dp_size=" + std::to_string(cfg_.dp);
      return;
    }
    r.branch = Branch::kEpSpShards;
    const int64_t s = len / cfg_.dp;
    const int64_t group = mut_.has(Mutant::kShardStartWithoutS) ? r.dp : r.dp * s;
    const int64_t start = prefix_local_[static_cast<size_t>(group)];
    const int64_t end = mut_.has(Mutant::kNoSpTrim)
                            ? start + prefix_local_[static_cast<size_t>(group + s)] -
                                  prefix_local_[static_cast<size_t>(group)]
                            : start + l;
    Write(r, topk, start, end);
  }

  // device_buffer[:end-start, layer, :] = topk_ids[start:end]
  void Write(RankObservation& r, const Routed& topk, int64_t start, int64_t end) const {
    RowRuns rows = topk.Slice(start, end);
    const int64_t len = TotalRows(rows);
    if (len > capturer_rows_) {
      r.branch = Branch::kError;
      r.error = "IndexError: capture of " + std::to_string(len) +
                " rows into a capturer buffer of " + std::to_string(capturer_rows_) + " rows";
      return;
    }
    r.captured = std::move(rows);
    // Slice clamps to the tensor: record the rows it really took.
    r.capture_start = len > 0 ? std::max<int64_t>(start, 0) : 0;
    r.capture_end = r.capture_start + len;
  }

  // sp-tp-gather is a collective: if only some TP ranks of a DP rank reach
  // it, vLLM hangs. Report that on the ranks that would wait forever.
  void CheckTpCollective(Observation& obs, int64_t d) const {
    int64_t joined = 0;
    for (int64_t t = 0; t < cfg_.tp; ++t) {
      joined += obs.ranks[Index(d, t)].branch == Branch::kSpTpGather ? 1 : 0;
    }
    if (joined == 0 || joined == cfg_.tp) return;
    for (int64_t t = 0; t < cfg_.tp; ++t) {
      RankObservation& r = obs.ranks[Index(d, t)];
      if (r.branch != Branch::kSpTpGather) continue;
      r.branch = Branch::kError;
      r.captured.clear();
      r.error = "hang: only " + std::to_string(joined) + " of " + std::to_string(cfg_.tp) +
                " TP ranks of dp_rank=" + std::to_string(d) + " reach the TP all-gather";
    }
  }

  const Case& c_;
  const Config& cfg_;
  const SutOptions& opt_;
  const MutantSet& mut_;
  const DispatchPlan plan_;
  int64_t capturer_rows_ = 0;  // the buffer Write() fills, as the observation reports it
  const std::vector<int64_t>& num_tokens_ = c_.step.padded;
  std::vector<int64_t> prefix_tokens_;
  std::vector<int64_t> prefix_local_{0};
  std::vector<RowTensor> group_tensors_;  // index: DispatchPlan::groups
};

}  // namespace

std::span<const SutInfo> SutCatalogue() { return kSuts; }

std::optional<Version> FindSut(std::string_view name) {
  for (const SutInfo& info : kSuts) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

std::optional<std::string> SetMutantsByName(SutOptions& options, std::string_view names) {
  MutantSet set = options.mutants;
  while (!names.empty()) {
    const size_t comma = names.find(',');
    const std::string_view name = names.substr(0, comma);
    if (!name.empty()) {
      const std::optional<Mutant> m = FindMutant(name);
      if (!m) return std::string(name);
      set.set(*m);
    }
    names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
  }
  options.mutants = set;
  return std::nullopt;
}

std::string_view SutName(Version version) {
  for (const SutInfo& info : kSuts) {
    if (info.id == version) return info.name;
  }
  return "?";
}

std::string_view BranchName(Branch branch) {
  switch (branch) {
    case Branch::kNoDp: return "no-dp";
    case Branch::kNaiveDp: return "naive-dp";
    case Branch::kLocal: return "local";
    case Branch::kEpSpShards: return "ep-sp-shards";
    case Branch::kSpTpGather: return "sp-tp-gather";
    case Branch::kError: return "error";
    case Branch::kOther: return "other";
  }
  return "error";
}

Observation ObserveDispatch(const Case& c, const SutOptions& options, const DispatchPlan& plan,
                            Capturer capturer) {
  const Config& cfg = c.config;
  Observation obs;
  obs.local_sizes = plan.local_sizes;
  obs.policy = std::string(PolicyName(options.policy));
  obs.replay_rows = ReplayBufferRows(cfg, options.policy, options.mutants);
  if (cfg.moe_comm != MoeComm::kNone) {
    // vllm-ascend's own MoE kernels take no vLLM routing-replay buffer.
    obs.policy = "none: vllm-ascend's kernels have no replay buffer";
    obs.replay_rows = std::numeric_limits<int64_t>::max();
  }
  // The capturer's device buffer: (M, num_layers, top_k). An engine SUT's
  // capturer allocates its own, so the mutant applies to the built-in SUT only.
  obs.capturer_rows = options.mutants.has(Mutant::kCapturerRowsPerShard) &&
                                  capturer == Capturer::kBuiltIn
                          ? CeilDiv(cfg.max_num_batched_tokens, cfg.tp)
                          : cfg.max_num_batched_tokens;
  obs.replay_dtype = "int16";
  obs.replay_max_id = 32767;
  if (cfg.moe_comm != MoeComm::kNone) {
    obs.replay_dtype = "none";
    obs.replay_max_id = std::numeric_limits<int64_t>::max();
  }
  SetSnapshotDtype(cfg, options.mutants, obs);
  obs.ranks.resize(plan.ranks.size());
  for (size_t i = 0; i < plan.ranks.size(); ++i) {
    RankObservation& r = obs.ranks[i];
    r.dp = plan.ranks[i].dp;
    r.tp = plan.ranks[i].tp;
    r.n = TotalRows(plan.Routed(i));
    obs.kernel_rows = std::max(obs.kernel_rows, r.n);
    if (obs.replay_rows < r.n) {
      r.replay_error = "ValueError: Routing replay buffer was initialized for " +
                       std::to_string(obs.replay_rows) +
                       " tokens on cuda:0, but the kernel received " + std::to_string(r.n) +
                       " tokens on cuda:0.";
    }
  }
  return obs;
}

Observation RunSut(const Case& c, const SutOptions& options) {
  return CaptureRun(c, options).Run();
}

}  // namespace r3::sut
