#include "r3/check/report.h"

#include <sstream>

#include "r3/case/rows_json.h"
#include "r3/check/strip.h"
#include "r3/model/sizing.h"

namespace r3::check {
namespace {

std::string ListText(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    if (i == 32 && values.size() > 40) {
      out += "... " + std::to_string(values.size() - 32) + " more";
      break;
    }
    out += std::to_string(values[i]);
  }
  return out + "]";
}

std::string ViolationLine(const Violation& v, const KnownFinding* finding) {
  std::string line = "  [" + std::to_string(static_cast<int>(v.invariant)) + " " +
                     std::string(InvariantName(v.invariant)) + "] " + v.message;
  if (finding != nullptr) line += "  (known finding " + std::string(finding->id) + ")";
  return line;
}

// The rank's label in explain: "ok", the known finding that explains its
// wrong capture (a PASS verdict must not show a rank as WRONG), or "WRONG".
// A violation names a rank by DP (and TP, or -1 for every TP rank of it).
std::string RankLabel(const model::RankLayout& r, const sut::RankObservation& o,
                      const CaseResult& result) {
  if (o.error.empty() && o.captured == r.expected) return "ok";
  const KnownFinding* known = nullptr;  // set once a violation names the rank
  for (size_t i = 0; i < result.verdict.violations.size(); ++i) {
    const Violation& v = result.verdict.violations[i];
    if (v.dp != r.dp || (v.tp != -1 && v.tp != r.tp)) continue;
    if (result.explained[i] == nullptr) return "WRONG";
    known = result.explained[i];
  }
  return known != nullptr ? "known finding " + std::string(known->id) : "WRONG";
}

}  // namespace

namespace {

// The sizing policy judged: the engine's own sizing code when it loaded
// some (its rows then replace --policy's), else the built-in policy.
std::string PolicyLabel(const sut::Producer& producer) {
  std::string label = producer.SizingLabel();
  if (!label.empty()) return label;
  return std::string(sut::PolicyName(producer.options().policy));
}

}  // namespace

nlohmann::ordered_json OptionsJson(const sut::Producer& producer) {
  nlohmann::ordered_json mutants = nlohmann::ordered_json::array();
  for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
    if (producer.options().mutants.has(m.id)) mutants.push_back(m.name);
  }
  return {{"sut", producer.Label()},
          {"policy", PolicyLabel(producer)},
          {"mutants", mutants}};
}

std::string DeviceLine(const sut::Observation& observation) {
  if (!observation.device) return "";
  const sut::DeviceCheck& d = *observation.device;
  std::string line = "gpu: " + d.mode + ", " + std::to_string(d.steps) + " step(s), " +
                     std::to_string(d.values_checked) + " values checked, " +
                     std::to_string(d.wrong_values) + " wrong";
  if (d.first_mismatch) {
    const sut::Mismatch& m = *d.first_mismatch;
    line += "; first mismatch: rank dp=" + std::to_string(m.dp) + " tp=" + std::to_string(m.tp) +
            " row " + std::to_string(m.row) + " layer " + std::to_string(m.layer) + " k " +
            std::to_string(m.k) + ": got " + std::to_string(m.got) + ", expected " +
            std::to_string(m.expected);
  }
  return line + "\n";
}

nlohmann::ordered_json DeviceJson(const sut::Observation& observation) {
  if (!observation.device) return nullptr;
  const sut::DeviceCheck& d = *observation.device;
  nlohmann::ordered_json j = {{"mode", d.mode},
                              {"layer", d.layer},
                              {"steps", d.steps},
                              {"values_checked", d.values_checked},
                              {"wrong_values", d.wrong_values},
                              {"first_mismatch", nullptr}};
  if (d.first_mismatch) {
    const sut::Mismatch& m = *d.first_mismatch;
    j["first_mismatch"] = {{"dp", m.dp},       {"tp", m.tp},   {"row", m.row},
                           {"layer", m.layer}, {"k", m.k},     {"got", m.got},
                           {"expected", m.expected}};
  }
  return j;
}

std::string VerdictWord(const CaseResult& result) {
  if (result.verdict.ok()) return "pass";
  return result.CountUnexplained() == 0 ? "pass-known" : "fail";
}

nlohmann::ordered_json ViolationsJson(const CaseResult& result) {
  nlohmann::ordered_json violations = nlohmann::ordered_json::array();
  for (size_t i = 0; i < result.verdict.violations.size(); ++i) {
    const Violation& v = result.verdict.violations[i];
    const KnownFinding* f = result.explained[i];
    violations.push_back({{"invariant", static_cast<int>(v.invariant)},
                          {"name", InvariantName(v.invariant)},
                          {"dp", v.dp},
                          {"tp", v.tp},
                          {"message", v.message},
                          {"known_finding", f ? nlohmann::ordered_json(f->id)
                                              : nlohmann::ordered_json(nullptr)}});
  }
  return violations;
}

std::string DescribeOptions(const sut::Producer& producer) {
  std::string out = "sut " + producer.Label() + ", policy " + PolicyLabel(producer);
  for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
    if (producer.options().mutants.has(m.id)) out += ", mutant " + std::string(m.name);
  }
  return out;
}

std::string VerdictText(const std::string& source, const CaseResult& result,
                        const sut::Producer& producer, size_t max_violations) {
  std::ostringstream out;
  const auto& violations = result.verdict.violations;
  const int unexplained = result.CountUnexplained();
  out << source << ": ";
  if (violations.empty()) {
    out << "PASS";
  } else if (unexplained == 0) {
    out << "PASS with " << violations.size() << " known-finding violation(s)";
  } else {
    out << "FAIL, " << violations.size() << " violation(s)";
  }
  out << " (" << DescribeOptions(producer) << ")\n";
  for (size_t i = 0; i < violations.size() && i < max_violations; ++i) {
    out << ViolationLine(violations[i], result.explained[i]) << '\n';
  }
  if (violations.size() > max_violations) {
    out << "  ... and " << violations.size() - max_violations << " more\n";
  }
  return out.str();
}

std::string ExplainText(const Case& c, const CaseResult& result, const sut::Producer& producer) {
  const Config& cfg = c.config;
  const model::Layout& layout = result.layout;
  std::ostringstream out;
  out << "configuration: DP " << cfg.dp << ", TP " << cfg.tp << ", EP "
      << (cfg.ep ? "on (EP size " + std::to_string(cfg.dp * cfg.tp) + ")" : std::string("off"))
      << ", " << DispatchName(cfg.dispatch) << " dispatch, SP "
      << (layout.sp ? "on" : "off") << " (sp " << SpModeName(cfg.sp) << "), M "
      << cfg.max_num_batched_tokens << ", top_k " << cfg.top_k << "\n";
  out << "step: tokens " << ListText(c.step.tokens) << ", N (padded) "
      << ListText(c.step.padded) << "\n";
  out << "local_sizes: "
      << (layout.local_sizes ? ListText(*layout.local_sizes) : std::string("unset (no DP metadata)"))
      << "\n";
  if (cfg.moe_comm != MoeComm::kNone) {
    out << "dispatch: vllm-ascend " << MoeCommName(cfg.moe_comm) << ": "
        << (cfg.moe_comm == MoeComm::kAllGather
                ? "every DP rank padded to max(N) rows, then all-gathered (pad rows between ranks)"
            : cfg.moe_comm == MoeComm::kAllToAll
                ? "each DP rank's rows (at least tp) tensor_split over TP"
                : "each DP rank's rows padded to tp chunks of cdiv(max(N), tp), one per TP rank")
        << "\n";
  } else switch (layout.group) {
    case model::GatherGroup::kNone:
      out << "dispatch: no gather before the kernel; each router sees its "
          << (layout.sp ? "own SP shard" : "own DP rank's rows") << "\n";
      break;
    case model::GatherGroup::kDp:
      out << "dispatch: all_gatherv over each DP group (sizes = N), DP-rank order\n";
      break;
    case model::GatherGroup::kEp:
      out << "dispatch: all_gatherv over the EP group (sizes = local_sizes), EP rank d*T+t order\n";
      break;
  }
  const sut::Observation& obs = result.observation;
  if (cfg.moe_comm != MoeComm::kNone) {
    out << "replay buffer: " << obs.policy << "; kernel input " << layout.kernel_rows
        << " rows\n\n";
  } else {
    out << "replay buffer: " << obs.replay_rows << " rows (policy " << obs.policy
        << "), kernel input " << layout.kernel_rows << " rows, exact bound "
        << model::RequiredReplayRows(cfg) << ": "
        << (layout.kernel_rows <= obs.replay_rows ? "fits" : "DOES NOT FIT") << "\n\n";
  }

  for (size_t i = 0; i < layout.tensors.size() && i < 8; ++i) {
    const RowRuns& runs = layout.tensors[i].runs();
    out << "tensor " << i << " (" << layout.tensors[i].rows() << " rows, digits = owner DP rank, "
        << "'.' = SP padding)\n  " << RenderStrip(runs) << "\n  " << RenderLegend(runs) << "\n";
  }
  if (layout.tensors.size() > 8) out << "  ... " << layout.tensors.size() - 8 << " more tensors\n";
  out << "\nranks (" << DescribeOptions(producer) << "):\n";
  const size_t shown = std::min<size_t>(layout.ranks.size(), 64);
  for (size_t i = 0; i < shown; ++i) {
    const model::RankLayout& r = layout.ranks[i];
    const sut::RankObservation& o = obs.ranks[i];
    out << "  dp" << r.dp << "/tp" << r.tp << ": sees tensor " << r.tensor << ", n=" << o.n
        << ", branch " << sut::BranchName(o.branch) << ", "
        << (o.error.empty() ? "captured " + DescribeRuns(o.captured) : o.error)
        << "; expected " << DescribeRuns(r.expected) << "  " << RankLabel(r, o, result) << "\n";
  }
  if (layout.ranks.size() > shown) out << "  ... " << layout.ranks.size() - shown << " more ranks\n";
  // The device's own account of the rows above (decoded from its buffers).
  if (obs.device) out << "\n" << DeviceLine(obs);
  out << "\n" << VerdictText("verdict", result, producer);
  return out.str();
}

nlohmann::ordered_json ExplainJson(const Case& c, const CaseResult& result,
                                   const sut::Producer& producer) {
  const model::Layout& layout = result.layout;
  const sut::Observation& obs = result.observation;
  nlohmann::ordered_json j;
  const nlohmann::ordered_json described = OptionsJson(producer);
  j["sut"] = described["sut"];
  j["mutants"] = described["mutants"];
  j["sp"] = layout.sp;
  j["dispatch"] = DispatchName(c.config.dispatch);
  j["gather_group"] = model::GatherGroupName(layout.group);
  j["tokens"] = c.step.tokens;
  j["N"] = c.step.padded;
  j["local_sizes"] = layout.local_sizes ? nlohmann::ordered_json(*layout.local_sizes)
                                        : nlohmann::ordered_json(nullptr);
  j["replay"] = {{"policy", obs.policy},
                 {"buffer_rows", obs.replay_rows},
                 {"kernel_rows", layout.kernel_rows},
                 {"required_rows", model::RequiredReplayRows(c.config)},
                 {"fits", layout.kernel_rows <= obs.replay_rows}};
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const RowTensor& t : layout.tensors) tensors.push_back(RunsToJson(t.runs()));
  j["tensors"] = tensors;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (size_t i = 0; i < layout.ranks.size(); ++i) {
    const model::RankLayout& r = layout.ranks[i];
    const sut::RankObservation& o = obs.ranks[i];
    ranks.push_back({{"dp", r.dp},
                     {"tp", r.tp},
                     {"n", o.n},
                     {"tensor", r.tensor},
                     {"branch", sut::BranchName(o.branch)},
                     {"error", o.error.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(o.error)},
                     {"captured", RunsToJson(o.captured)},
                     {"expected", RunsToJson(r.expected)},
                     {"ok", o.error.empty() && o.captured == r.expected},
                     {"label", RankLabel(r, o, result)}});
  }
  j["ranks"] = ranks;
  if (obs.device) j["device"] = DeviceJson(obs);
  j["violations"] = ViolationsJson(result);
  // "ok" agrees with the text verdict: known findings alone still PASS.
  j["verdict"] = VerdictWord(result);
  j["ok"] = result.CountUnexplained() == 0;
  return j;
}

}  // namespace r3::check
