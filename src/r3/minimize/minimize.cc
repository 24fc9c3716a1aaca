#include "r3/minimize/minimize.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "r3/case/case_format.h"
#include "r3/case/limits.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"
#include "r3/model/sequence_parallel.h"

namespace r3::minimize {
namespace {

using check::Invariant;
using Clock = std::chrono::steady_clock;

// Values from `lo` up to (not including) `v`, smallest first: lo, then
// v - (v-lo)/2, v - (v-lo)/4, ..., v - 1. Accepting the first that still
// fails and starting over is a binary search when the failure is monotone.
// Short ranges are tried exhaustively: failures are not monotone in the
// counts (3 rows over TP 2 leave SP padding, 2 rows do not).
std::vector<int64_t> Ladder(int64_t lo, int64_t v) {
  std::vector<int64_t> out;
  if (v <= lo) return out;
  if (v - lo <= 16) {
    for (int64_t x = lo; x < v; ++x) out.push_back(x);
    return out;
  }
  for (int64_t delta = v - lo; delta > 0; delta /= 2) {
    const int64_t x = v - delta;
    if (out.empty() || out.back() != x) out.push_back(x);
  }
  return out;
}

int64_t MaxPadded(const Case& c) {
  int64_t m = 0;
  for (int64_t n : c.step.padded) m = std::max(m, n);
  return m;
}

Case KeepRanks(const Case& c, size_t first, size_t count) {
  Case out = c;
  out.config.dp = static_cast<int64_t>(count);
  out.step.tokens.assign(c.step.tokens.begin() + first, c.step.tokens.begin() + first + count);
  out.step.padded.assign(c.step.padded.begin() + first, c.step.padded.begin() + first + count);
  return out;
}

Case DropRank(const Case& c, size_t d) {
  Case out = c;
  out.config.dp -= 1;
  out.step.tokens.erase(out.step.tokens.begin() + d);
  out.step.padded.erase(out.step.padded.begin() + d);
  return out;
}

// Every simpler neighbour of `c`, most structural first. Each candidate is
// smaller in a well-founded order (dp, tp, ep, dispatch, sp, counts, M,
// layers, top_k, experts only go down), so the greedy loop terminates.
std::vector<Case> Candidates(const Case& c) {
  std::vector<Case> out;
  const Config& cfg = c.config;
  const auto dp = static_cast<size_t>(cfg.dp);
  // Fewer DP ranks: a prefix, a suffix, then one rank at a time.
  for (int64_t k : Ladder(1, cfg.dp)) {
    out.push_back(KeepRanks(c, 0, static_cast<size_t>(k)));
    out.push_back(KeepRanks(c, dp - static_cast<size_t>(k), static_cast<size_t>(k)));
  }
  if (dp > 1) {
    for (size_t d = 0; d < dp; ++d) out.push_back(DropRank(c, d));
  }
  for (int64_t t : Ladder(1, cfg.tp)) {
    Case n = c;
    n.config.tp = t;
    out.push_back(n);
  }
  if (cfg.ep) {
    Case n = c;
    n.config.ep = false;
    out.push_back(n);
  }
  if (cfg.dispatch == Dispatch::kInternal) {
    Case n = c;
    n.config.dispatch = Dispatch::kNaive;
    out.push_back(n);
  }
  // SP: "off" where auto would turn it on; "auto" (the canonical spelling)
  // where it makes no difference.
  Config as_auto = cfg;
  as_auto.sp = SpMode::kAuto;
  const bool auto_on = model::SpEnabled(as_auto);
  if (cfg.sp == SpMode::kOn || (cfg.sp == SpMode::kAuto && auto_on)) {
    Case n = c;
    n.config.sp = SpMode::kOff;
    out.push_back(n);
  }
  if (cfg.sp == SpMode::kOn || (cfg.sp == SpMode::kOff && !auto_on)) {
    Case n = c;
    n.config.sp = SpMode::kAuto;
    out.push_back(n);
  }
  // A smaller M with every count clamped to it: shrinks the whole step at
  // once, which per-rank edits cannot do when the failure needs all ranks
  // near M (a sizing failure at warmup).
  for (int64_t m : Ladder(1, cfg.max_num_batched_tokens)) {
    Case n = c;
    n.config.max_num_batched_tokens = m;
    for (size_t d = 0; d < dp; ++d) {
      n.step.tokens[d] = std::min(n.step.tokens[d], m);
      n.step.padded[d] = std::min(n.step.padded[d], m);
    }
    out.push_back(n);
  }
  // Smaller steps: drop CUDA-graph padding, then shrink counts.
  for (size_t d = 0; d < dp; ++d) {
    const int64_t tokens = c.step.tokens[d];
    const int64_t padded = c.step.padded[d];
    for (int64_t p : Ladder(0, padded)) {  // both, keeping tokens <= padded
      Case n = c;
      n.step.padded[d] = p;
      n.step.tokens[d] = std::min(tokens, p);
      out.push_back(n);
    }
    for (int64_t p : Ladder(tokens, padded)) {  // less padding only
      Case n = c;
      n.step.padded[d] = p;
      out.push_back(n);
    }
    // Real tokens never shrink alone: every captured row counts, dummy or
    // not, so the simpler spelling is a step without padding (no `padded`
    // line). Sum of padded, then of padding, goes down: no cycles.
    if (tokens < padded) {
      Case n = c;
      n.step.tokens[d] = padded;
      out.push_back(n);
    }
  }
  for (int64_t m : Ladder(std::max<int64_t>(1, MaxPadded(c)), cfg.max_num_batched_tokens)) {
    Case n = c;
    n.config.max_num_batched_tokens = m;
    out.push_back(n);
  }
  for (int64_t l : Ladder(1, cfg.num_layers)) {
    Case n = c;
    n.config.num_layers = l;
    out.push_back(n);
  }
  for (int64_t k : Ladder(1, cfg.top_k)) {
    Case n = c;
    n.config.top_k = k;
    out.push_back(n);
  }
  for (int64_t e : Ladder(cfg.top_k, cfg.num_experts)) {
    Case n = c;
    n.config.num_experts = e;
    out.push_back(n);
  }
  return out;
}

class Minimizer {
 public:
  Minimizer(const MinimizeOptions& options, std::vector<Invariant> target)
      : options_(options),
        target_(std::move(target)),
        deadline_(Clock::now() + std::chrono::milliseconds(options.budget_ms)) {}

  // True when `c` is valid and fails exactly like the input.
  bool KeepsFailure(const Case& c) {
    if (!ValidateCase(c).field.empty()) return false;
    ++tried_;
    try {
      return Matches(UnexplainedInvariants(c, options_.sut));
    } catch (const std::exception&) {
      return false;  // a candidate the SUT cannot even run is not the same failure
    }
  }

  bool Matches(const std::vector<Invariant>& got) const {
    if (options_.invariant) {
      return std::find(got.begin(), got.end(), *options_.invariant) != got.end();
    }
    return got == target_;
  }

  bool OutOfBudget() {
    if (tried_ >= options_.max_evaluations || Clock::now() >= deadline_) exhausted_ = true;
    return exhausted_;
  }

  Case Run(Case current) {
    bool progress = true;
    while (progress && !OutOfBudget()) {
      progress = false;
      for (const Case& candidate : Candidates(current)) {
        if (OutOfBudget()) break;
        if (KeepsFailure(candidate)) {
          current = candidate;
          ++accepted_;
          progress = true;
          break;
        }
      }
    }
    return current;
  }

  int64_t tried() const { return tried_; }
  int64_t accepted() const { return accepted_; }
  bool exhausted() const { return exhausted_; }

 private:
  const MinimizeOptions& options_;
  std::vector<Invariant> target_;
  Clock::time_point deadline_;
  int64_t tried_ = 0;
  int64_t accepted_ = 0;
  bool exhausted_ = false;
};

// Alternatives probed for each field of the minimal case, with a setter.
struct Alternative {
  std::string value;
  Case c;
};

void AddScalar(std::vector<Alternative>& alts, const Case& c, int64_t value,
               const std::function<void(Case&, int64_t)>& set) {
  Case n = c;
  set(n, value);
  const std::string text = std::to_string(value);
  const bool seen = std::any_of(alts.begin(), alts.end(),
                                [&](const Alternative& a) { return a.value == text; });
  if (n != c && !seen) alts.push_back({text, n});
}

std::vector<std::pair<std::string, std::vector<Alternative>>> Probes(const Case& c) {
  std::vector<std::pair<std::string, std::vector<Alternative>>> fields;
  const Config& cfg = c.config;
  {
    std::vector<Alternative> alts;
    // Labels come from the alternative itself, so they cannot disagree.
    if (cfg.dp > 1) {
      Case fewer = KeepRanks(c, 0, c.step.tokens.size() - 1);
      alts.push_back({std::to_string(fewer.config.dp), fewer});
    }
    Case more = c;  // one more DP rank, a copy of the last one
    more.config.dp += 1;
    more.step.tokens.push_back(c.step.tokens.back());
    more.step.padded.push_back(c.step.padded.back());
    alts.push_back({std::to_string(more.config.dp), more});
    fields.emplace_back("dp", std::move(alts));
  }
  {
    std::vector<Alternative> alts;
    for (int64_t t : {cfg.tp - 1, cfg.tp + 1, cfg.tp * 2}) {
      AddScalar(alts, c, t, [](Case& n, int64_t v) { n.config.tp = v; });
    }
    fields.emplace_back("tp", std::move(alts));
  }
  {
    Case n = c;
    n.config.ep = !cfg.ep;
    fields.emplace_back("ep", std::vector<Alternative>{{n.config.ep ? "on" : "off", n}});
  }
  {
    Case n = c;
    n.config.dispatch = cfg.dispatch == Dispatch::kNaive ? Dispatch::kInternal : Dispatch::kNaive;
    fields.emplace_back("dispatch",
                        std::vector<Alternative>{{std::string(DispatchName(n.config.dispatch)), n}});
  }
  {
    std::vector<Alternative> alts;
    for (SpMode mode : {SpMode::kAuto, SpMode::kOn, SpMode::kOff}) {
      if (mode == cfg.sp) continue;
      Case n = c;
      n.config.sp = mode;
      alts.push_back({std::string(SpModeName(mode)), n});
    }
    fields.emplace_back("sp", std::move(alts));
  }
  {
    std::vector<Alternative> alts;
    const int64_t m = cfg.max_num_batched_tokens;
    for (int64_t v : {m - 1, m + 1, m * 2}) {
      AddScalar(alts, c, v, [](Case& n, int64_t x) { n.config.max_num_batched_tokens = x; });
    }
    fields.emplace_back("max_num_batched_tokens", std::move(alts));
  }
  {
    std::vector<Alternative> alts;
    for (int64_t v : {cfg.top_k - 1, cfg.top_k + 1}) {
      AddScalar(alts, c, v, [](Case& n, int64_t x) { n.config.top_k = x; });
    }
    fields.emplace_back("top_k", std::move(alts));
  }
  {
    std::vector<Alternative> alts;
    for (int64_t v : {cfg.num_experts - 1, cfg.num_experts + 1, cfg.num_experts * 2}) {
      AddScalar(alts, c, v, [](Case& n, int64_t x) { n.config.num_experts = x; });
    }
    fields.emplace_back("num_experts", std::move(alts));
  }
  {
    std::vector<Alternative> alts;
    for (int64_t v : {cfg.num_layers - 1, cfg.num_layers + 1}) {
      AddScalar(alts, c, v, [](Case& n, int64_t x) { n.config.num_layers = x; });
    }
    fields.emplace_back("num_layers", std::move(alts));
  }
  // Each DP rank's counts: one token more or fewer, padding kept consistent.
  for (size_t d = 0; d < c.step.tokens.size(); ++d) {
    std::vector<Alternative> tokens;
    std::vector<Alternative> padded;
    for (int64_t delta : {-1, 1}) {
      Case n = c;
      n.step.tokens[d] += delta;
      n.step.padded[d] = std::max(n.step.padded[d], n.step.tokens[d]);
      tokens.push_back({std::to_string(n.step.tokens[d]), n});
      Case p = c;
      p.step.padded[d] += delta;
      padded.push_back({std::to_string(p.step.padded[d]), p});
    }
    fields.emplace_back("tokens[" + std::to_string(d) + "]", std::move(tokens));
    fields.emplace_back("padded[" + std::to_string(d) + "]", std::move(padded));
  }
  return fields;
}

std::string FieldValue(const Case& c, const std::string& field) {
  const Config& cfg = c.config;
  if (field == "dp") return std::to_string(cfg.dp);
  if (field == "tp") return std::to_string(cfg.tp);
  if (field == "ep") return cfg.ep ? "on" : "off";
  if (field == "dispatch") return std::string(DispatchName(cfg.dispatch));
  if (field == "sp") return std::string(SpModeName(cfg.sp));
  if (field == "max_num_batched_tokens") return std::to_string(cfg.max_num_batched_tokens);
  if (field == "top_k") return std::to_string(cfg.top_k);
  if (field == "num_experts") return std::to_string(cfg.num_experts);
  if (field == "num_layers") return std::to_string(cfg.num_layers);
  // "tokens[d]" / "padded[d]": that DP rank's value.
  const size_t d = std::stoul(field.substr(field.find('[') + 1));
  if (field.rfind("tokens", 0) == 0) return std::to_string(c.step.tokens[d]);
  return std::to_string(c.step.padded[d]);
}

// Stops at the budget like the shrinking does (on a large case the probes
// cost more than the shrinking): *complete is then false.
std::vector<FieldReport> ReportFields(const Case& minimal, Minimizer& judge,
                                      const sut::SutOptions& options, bool* complete) {
  std::vector<FieldReport> reports;
  *complete = true;
  for (auto& [field, alts] : Probes(minimal)) {
    FieldReport report{field, FieldValue(minimal, field), {}};
    for (const Alternative& alt : alts) {
      if (judge.OutOfBudget()) {
        *complete = false;
        if (!report.probes.empty()) reports.push_back(std::move(report));
        return reports;
      }
      if (!ValidateCase(alt.c).field.empty()) continue;
      std::vector<Invariant> got;
      try {
        got = UnexplainedInvariants(alt.c, options);
      } catch (const std::exception&) {
        continue;
      }
      FieldProbe probe{alt.value, "", judge.Matches(got)};
      if (probe.same) {
        probe.outcome = "same failure";
      } else if (got.empty()) {
        probe.outcome = "passes";
      } else {
        probe.outcome = "fails differently (" + InvariantList(got) + ")";
      }
      report.probes.push_back(std::move(probe));
    }
    if (!report.probes.empty()) reports.push_back(std::move(report));
  }
  return reports;
}

std::string SafeName(std::string_view text) {
  std::string out;
  for (char ch : text) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    out += ok ? ch : '-';
  }
  return out;
}

}  // namespace

bool FieldReport::free() const {
  return std::all_of(probes.begin(), probes.end(), [](const FieldProbe& p) { return p.same; });
}

std::vector<Invariant> UnexplainedInvariants(const Case& c, const sut::SutOptions& options) {
  const check::CaseResult result = check::RunCase(c, options);
  std::vector<Invariant> out;
  for (size_t i = 0; i < result.verdict.violations.size(); ++i) {
    if (result.explained[i] == nullptr) out.push_back(result.verdict.violations[i].invariant);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

MinimizeResult Minimize(const Case& c, const MinimizeOptions& options) {
  if (const FieldError e = ValidateCase(c); !e.field.empty()) {
    throw std::invalid_argument(e.field + ": " + e.message);
  }
  MinimizeResult result;
  result.original = c;
  result.minimal = c;
  result.input_failure = UnexplainedInvariants(c, options.sut);
  result.kept = result.input_failure;
  if (options.invariant) result.kept = {*options.invariant};
  Minimizer minimizer(options, result.input_failure);
  result.input_fails = minimizer.Matches(result.input_failure) && !result.input_failure.empty();
  if (!result.input_fails) return result;
  result.minimal = minimizer.Run(c);
  result.tried = minimizer.tried();
  result.accepted = minimizer.accepted();
  result.budget_exhausted = minimizer.exhausted();
  result.fields = ReportFields(result.minimal, minimizer, options.sut, &result.fields_complete);
  return result;
}

std::string InvariantList(const std::vector<Invariant>& invariants) {
  std::string out;
  for (size_t i = 0; i < invariants.size(); ++i) {
    out += (i == 0 ? "" : ", ") + std::to_string(static_cast<int>(invariants[i])) + " " +
           std::string(check::InvariantName(invariants[i]));
  }
  return out;
}

std::string MinimizedText(const MinimizeResult& result, const sut::SutOptions& options) {
  std::ostringstream out;
  out << "# r3check minimize: " << (result.kept.size() == 1 ? "invariant " : "invariants ")
      << InvariantList(result.kept) << (result.kept.size() == 1 ? " fails" : " fail")
      << " and no known finding explains it\n";
  out << "# under " << check::DescribeOptions(options) << ".\n";
  out << "# Shrunk in " << result.accepted << " steps (" << result.tried
      << " candidates tried)" << (result.budget_exhausted ? "; budget exhausted, may shrink further" : "")
      << ".\n";
  std::vector<std::string> free_fields;
  for (const FieldReport& f : result.fields) {
    if (f.free()) free_fields.push_back(f.field);
  }
  if (!result.fields_complete) {
    out << "# Field report cut short by the budget: fields not listed below were not probed.\n";
  }
  out << "# Fields that can vary without changing the failure:";
  if (free_fields.empty()) out << " none";
  for (const std::string& f : free_fields) out << ' ' << f;
  out << "\n# Fields the failure depends on (alternative -> outcome):\n";
  for (const FieldReport& f : result.fields) {
    if (f.free()) continue;
    out << "#   " << f.field << " = " << f.value << ":";
    for (size_t i = 0; i < f.probes.size(); ++i) {
      out << (i == 0 ? " " : "; ") << f.probes[i].value << " -> " << f.probes[i].outcome;
    }
    out << '\n';
  }
  out << PrintCase(result.minimal);
  return out.str();
}

std::string DefaultRegressionName(const MinimizeResult& result, const sut::SutOptions& options) {
  std::string name;
  for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
    if (options.mutants.has(m.id)) name += (name.empty() ? "" : "+") + std::string(m.name);
  }
  if (name.empty()) {
    name = options.external ? options.external->Id() : std::string(sut::SutName(options.version));
  }
  name += "-" + std::string(sut::PolicyName(options.policy)) + "-inv";
  for (size_t i = 0; i < result.kept.size(); ++i) {
    name += (i == 0 ? "" : "-") + std::to_string(static_cast<int>(result.kept[i]));
  }
  return SafeName(name);
}

}  // namespace r3::minimize
