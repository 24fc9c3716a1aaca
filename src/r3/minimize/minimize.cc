#include "r3/minimize/minimize.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <stdexcept>

#include "r3/case/case_format.h"
#include "r3/case/case_fields.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"

namespace r3::minimize {
namespace {

using check::Invariant;
using Clock = std::chrono::steady_clock;

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

// Each value of the field's shrink ladder (case_fields.h), in a copy of `c`.
void AddLadder(std::vector<Case>& out, const Case& c, FieldId id) {
  const CaseField& field = Field(id);
  for (int64_t v : ShrinkLadder(field, c)) {
    Case n = c;
    field.set(n, 0, v);
    out.push_back(std::move(n));
  }
}

// Every simpler neighbour of `c`, most structural first. Each candidate is
// smaller in a well-founded order (dp, tp, ep, dispatch, sp, counts, M,
// layers, top_k, experts only go down), so the greedy loop terminates.
std::vector<Case> Candidates(const Case& c) {
  std::vector<Case> out;
  const Config& cfg = c.config;
  const auto dp = static_cast<size_t>(cfg.dp);
  // Fewer DP ranks: a prefix, a suffix, then one rank at a time.
  for (int64_t k : ShrinkLadder(Field(FieldId::kDp), c)) {
    out.push_back(KeepRanks(c, 0, static_cast<size_t>(k)));
    out.push_back(KeepRanks(c, dp - static_cast<size_t>(k), static_cast<size_t>(k)));
  }
  if (dp > 1) {
    for (size_t d = 0; d < dp; ++d) out.push_back(DropRank(c, d));
  }
  // vllm-ascend's comm types toward the all-gather (none leaves its layouts).
  for (FieldId id : {FieldId::kTp, FieldId::kEp, FieldId::kDispatch, FieldId::kMoeComm}) {
    AddLadder(out, c, id);
  }
  // SP: "off" where auto would turn it on; "auto" (the canonical spelling)
  // where it makes no difference.
  const bool auto_on = SpPossible(cfg);
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
  for (int64_t m : ShrinkLadder(Field(FieldId::kMaxNumBatchedTokens).lo,
                                cfg.max_num_batched_tokens)) {
    Case n = c;
    n.config.max_num_batched_tokens = m;
    n.config.chunked_prefill_size = std::min(n.config.chunked_prefill_size, m);
    for (size_t d = 0; d < dp; ++d) {
      n.step.tokens[d] = std::min(n.step.tokens[d], m);
      n.step.padded[d] = std::min(n.step.padded[d], m);
    }
    out.push_back(n);
  }
  // Smaller steps: drop CUDA-graph padding, then shrink counts.
  const CaseField& padded_field = Field(FieldId::kPadded);
  for (size_t d = 0; d < dp; ++d) {
    const int64_t tokens = c.step.tokens[d];
    const int64_t padded = c.step.padded[d];
    for (int64_t p : ShrinkLadder(padded_field.lo, padded)) {  // both, keeping tokens <= padded
      Case n = c;
      n.step.padded[d] = p;
      n.step.tokens[d] = std::min(tokens, p);
      out.push_back(n);
    }
    for (int64_t p : ShrinkLadder(padded_field, c, d)) {  // less padding only
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
  // SGLang's chunk: unset (the simpler spelling), else smaller; never back
  // from unset (0 means M), so the order stays well-founded.
  if (cfg.chunked_prefill_size > 0) {
    Case n = c;
    n.config.chunked_prefill_size = 0;
    out.push_back(n);
    for (int64_t v : ShrinkLadder(1, cfg.chunked_prefill_size)) {
      n.config.chunked_prefill_size = v;
      out.push_back(n);
    }
  }
  // M alone down to the largest count, then the sizes of the model.
  for (FieldId id : {FieldId::kMaxNumBatchedTokens, FieldId::kNumLayers, FieldId::kTopK,
                     FieldId::kNumExperts}) {
    AddLadder(out, c, id);
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
    // A layout the producer does not model is no deployment of it.
    if (!OutsideDomain(options_.producer->Domain(), c, "").field.empty()) return false;
    ++tried_;
    try {
      return Matches(UnexplainedInvariants(c, *options_.producer));
    } catch (const std::exception& e) {
      NoteUnrunnable(e);
      return false;  // a candidate the SUT cannot even run is not the same failure
    }
  }

  // A case the producer threw on: counted, and the first error kept, so
  // that a producer failing (a CUDA error) is never silent.
  void NoteUnrunnable(const std::exception& e) {
    if (unrunnable_++ == 0) first_unrunnable_ = e.what();
  }
  int64_t unrunnable() const { return unrunnable_; }
  const std::string& first_unrunnable() const { return first_unrunnable_; }

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
  int64_t unrunnable_ = 0;
  std::string first_unrunnable_;
  int64_t accepted_ = 0;
  bool exhausted_ = false;
};

// Alternatives probed for each field of the minimal case.
struct Alternative {
  std::string value;
  Case c;
};

struct Probe {
  std::string field;  // "tp", "tokens[0]"
  std::string value;  // the minimal case's
  std::vector<Alternative> alts;
};

// Labels come from the alternative itself, so they cannot disagree. Repeats
// and no-ops are left out; an invalid alternative (tp 0) is skipped when
// probed.
void AddAlternative(std::vector<Alternative>& alts, const Case& c, const CaseField& field,
                    int64_t value) {
  Case n = c;
  field.set(n, 0, value);
  std::string text = FieldText(field, n);
  const bool seen = std::any_of(alts.begin(), alts.end(),
                                [&](const Alternative& a) { return a.value == text; });
  if (n != c && !seen) alts.push_back({std::move(text), std::move(n)});
}

// Per field of the table: every other choice, or one less, one more (and
// twice, where the table asks). dp one more is a copy of the last rank.
std::vector<Probe> Probes(const Case& c) {
  std::vector<Probe> fields;
  for (const CaseField& field : CaseFields()) {
    if (field.kind == FieldKind::kPerRank) continue;  // below, rank by rank
    Probe probe{std::string(field.name), FieldText(field, c), {}};
    const int64_t v = field.get(c, 0);
    // An optional field left unset says nothing of this case's layout.
    if (field.optional && v == field.lo) continue;
    if (field.kind == FieldKind::kChoice) {
      for (int64_t x = field.lo; x <= field.hi; ++x) AddAlternative(probe.alts, c, field, x);
    } else {
      AddAlternative(probe.alts, c, field, v - 1);
      AddAlternative(probe.alts, c, field, v + 1);
      if (field.probe_double) AddAlternative(probe.alts, c, field, v * 2);
    }
    fields.push_back(std::move(probe));
  }
  // Each DP rank's counts: one token more or fewer, padding kept consistent.
  for (size_t d = 0; d < c.step.tokens.size(); ++d) {
    const std::string rank = "[" + std::to_string(d) + "]";
    Probe tokens{"tokens" + rank, std::to_string(c.step.tokens[d]), {}};
    Probe padded{"padded" + rank, std::to_string(c.step.padded[d]), {}};
    for (int64_t delta : {-1, 1}) {
      Case n = c;
      n.step.tokens[d] += delta;
      n.step.padded[d] = std::max(n.step.padded[d], n.step.tokens[d]);
      tokens.alts.push_back({std::to_string(n.step.tokens[d]), n});
      Case p = c;
      p.step.padded[d] += delta;
      padded.alts.push_back({std::to_string(p.step.padded[d]), p});
    }
    fields.push_back(std::move(tokens));
    fields.push_back(std::move(padded));
  }
  return fields;
}

// Stops at the budget like the shrinking does (on a large case the probes
// cost more than the shrinking): *complete is then false.
std::vector<FieldReport> ReportFields(const Case& minimal, Minimizer& judge,
                                      sut::Producer& producer, bool* complete) {
  std::vector<FieldReport> reports;
  *complete = true;
  for (const Probe& field : Probes(minimal)) {
    FieldReport report{field.field, field.value, {}};
    for (const Alternative& alt : field.alts) {
      if (judge.OutOfBudget()) {
        *complete = false;
        if (!report.probes.empty()) reports.push_back(std::move(report));
        return reports;
      }
      if (!ValidateCase(alt.c).field.empty()) continue;
      // A layout the producer does not model has no outcome to report.
      if (!OutsideDomain(producer.Domain(), alt.c, "").field.empty()) continue;
      std::vector<Invariant> got;
      try {
        got = UnexplainedInvariants(alt.c, producer);
      } catch (const std::exception& e) {
        judge.NoteUnrunnable(e);
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

std::vector<Invariant> UnexplainedInvariants(const Case& c, sut::Producer& producer) {
  const check::CaseResult result = std::move(check::RunCases({&c, 1}, producer).at(0));
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
  if (options.producer == nullptr) throw std::invalid_argument("MinimizeOptions.producer: none");
  MinimizeResult result;
  result.original = c;
  result.minimal = c;
  result.input_failure = UnexplainedInvariants(c, *options.producer);
  result.kept = result.input_failure;
  if (options.invariant) result.kept = {*options.invariant};
  Minimizer minimizer(options, result.input_failure);
  result.input_fails = minimizer.Matches(result.input_failure) && !result.input_failure.empty();
  if (!result.input_fails) return result;
  result.minimal = minimizer.Run(c);
  result.tried = minimizer.tried();
  result.accepted = minimizer.accepted();
  result.budget_exhausted = minimizer.exhausted();
  if (options.report_fields) {
    result.fields = ReportFields(result.minimal, minimizer, *options.producer, &result.fields_complete);
  }
  result.unrunnable = minimizer.unrunnable();
  result.first_unrunnable = minimizer.first_unrunnable();
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

std::string MinimizedText(const MinimizeResult& result, const sut::Producer& producer) {
  std::ostringstream out;
  out << "# r3check minimize: " << (result.kept.size() == 1 ? "invariant " : "invariants ")
      << InvariantList(result.kept) << (result.kept.size() == 1 ? " fails" : " fail")
      << " and no known finding explains it\n";
  out << "# under " << check::DescribeOptions(producer) << ".\n";
  out << "# Shrunk in " << result.accepted << " steps (" << result.tried
      << " candidates tried)" << (result.budget_exhausted ? "; budget exhausted, may shrink further" : "")
      << ".\n";
  if (result.unrunnable > 0) {
    std::string first = result.first_unrunnable;
    std::replace(first.begin(), first.end(), '\n', ' ');
    out << "# " << result.unrunnable
        << " candidate(s) could not be run under this SUT and were not taken; the first: " << first
        << "\n";
  }
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

std::string DefaultRegressionName(const MinimizeResult& result, const sut::Producer& producer) {
  const sut::SutOptions& options = producer.options();
  std::string name;
  for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
    if (options.mutants.has(m.id)) name += (name.empty() ? "" : "+") + std::string(m.name);
  }
  if (name.empty()) {
    name = producer.Id();
  }
  name += "-" + std::string(sut::PolicyName(options.policy)) + "-inv";
  for (size_t i = 0; i < result.kept.size(); ++i) {
    name += (i == 0 ? "" : "-") + std::to_string(static_cast<int>(result.kept[i]));
  }
  return SafeName(name);
}

}  // namespace r3::minimize
