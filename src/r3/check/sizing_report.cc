#include "r3/check/sizing_report.h"

#include <cstdio>
#include <sstream>

#include "r3/case/checked_math.h"
#include "r3/model/layout.h"
#include "r3/model/sizing.h"
#include "r3/sut/replay_sizing.h"

namespace r3::check {

namespace {

PolicySizing Sizing(const Case& c, std::string name, int64_t rows, int64_t required) {
  PolicySizing p;
  p.name = std::move(name);
  p.rows = rows;
  p.safe = p.rows >= required;
  p.slack = required == 0 ? 0.0 : static_cast<double>(p.rows) / static_cast<double>(required);
  p.bytes_per_layer = CheckedMul(CheckedMul(p.rows, c.config.top_k), 2);
  p.bytes_all_layers = CheckedMul(p.bytes_per_layer, c.config.num_layers);
  return p;
}

}  // namespace

SizingReport BuildSizingReport(const Case& c, const sut::MutantSet& mutants,
                               const std::optional<EngineSizing>& engine) {
  SizingReport report;
  report.required_rows = model::RequiredReplayRows(c.config);
  report.step_kernel_rows = model::BuildLayout(c).kernel_rows;
  for (const sut::PolicyInfo& info : sut::PolicyCatalogue()) {
    report.policies.push_back(Sizing(c, std::string(info.name),
                                     sut::ReplayBufferRows(c.config, info.id, mutants),
                                     report.required_rows));
  }
  if (engine) {
    // The row is named by the label's first word: "vllm".
    report.engine = Sizing(c, engine->label.substr(0, engine->label.find(' ')), engine->rows,
                           report.required_rows);
    report.engine_step = *engine;
  }
  return report;
}

namespace {

// 131072 -> "128 KiB": exact bytes stay in --json.
std::string HumanBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0 || value == static_cast<double>(static_cast<int64_t>(value))) {
    std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(value), kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  }
  return buf;
}

}  // namespace

std::string SizingText(const Case& c, const SizingReport& report) {
  std::ostringstream out;
  out << "exact bound: " << report.required_rows
      << " rows (most kernel-input rows over every legal step)\n"
      << "this step:   " << report.step_kernel_rows << " rows\n"
      << "int16 replay buffer, top_k " << c.config.top_k << ", " << c.config.num_layers
      << " layer(s)\n\n";
  char line[160];
  std::snprintf(line, sizeof line, "%-8s %12s  %-6s %8s %16s %18s\n", "policy", "rows", "safe",
                "slack", "bytes/layer", "bytes/all layers");
  out << line;
  for (const PolicySizing& p : report.policies) {
    std::snprintf(line, sizeof line, "%-8s %12lld  %-6s %7.3fx %16s %18s\n", p.name.c_str(),
                  static_cast<long long>(p.rows), p.safe ? "yes" : "NO", p.slack,
                  HumanBytes(p.bytes_per_layer).c_str(), HumanBytes(p.bytes_all_layers).c_str());
    out << line;
  }
  if (report.engine) {
    const PolicySizing& p = *report.engine;
    const EngineSizing& e = report.engine_step;
    std::snprintf(line, sizeof line, "%-8s %12lld  %-6s %7.3fx %16s %18s\n", p.name.c_str(),
                  static_cast<long long>(p.rows), p.safe ? "yes" : "NO", p.slack,
                  HumanBytes(p.bytes_per_layer).c_str(), HumanBytes(p.bytes_all_layers).c_str());
    out << line << "\n" << p.name << ": " << e.label << ", the rows it allocated per rank";
    if (e.max_rows != e.rows) {
      out << " (" << e.rows << " to " << e.max_rows << "; the row shows the smallest)";
    }
    out << "\n" << p.name << " this step: ";
    if (!e.step_error.empty()) {
      out << "raised " << e.step_error << "\n";
    } else if (e.short_slices > 0) {
      out << e.short_slices << " rank(s) got a slice of " << e.shortest_slice
          << " rows for up to " << e.kernel_rows << " kernel input rows, and nothing raised\n";
    } else {
      out << "the kernel's " << e.kernel_rows << " rows " << (e.kernel_rows <= e.rows ? "fit" : "DO NOT FIT")
          << "\n";
    }
  }
  return out.str();
}

nlohmann::ordered_json SizingJson(const SizingReport& report) {
  nlohmann::ordered_json j;
  j["required_rows"] = report.required_rows;
  j["step_kernel_rows"] = report.step_kernel_rows;
  nlohmann::ordered_json policies = nlohmann::ordered_json::object();
  for (const PolicySizing& p : report.policies) {
    policies[p.name] = {{"rows", p.rows},
                        {"safe", p.safe},
                        {"slack", p.slack},
                        {"bytes_per_layer", p.bytes_per_layer},
                        {"bytes_all_layers", p.bytes_all_layers}};
  }
  j["policies"] = policies;
  if (report.engine) {
    const PolicySizing& p = *report.engine;
    const EngineSizing& e = report.engine_step;
    j["engine"] = {{"name", p.name},
                   {"label", e.label},
                   {"rows", p.rows},
                   {"max_rows", e.max_rows},
                   {"safe", p.safe},
                   {"slack", p.slack},
                   {"bytes_per_layer", p.bytes_per_layer},
                   {"bytes_all_layers", p.bytes_all_layers},
                   {"step_kernel_rows", e.kernel_rows},
                   {"step_error", e.step_error.empty() ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json(e.step_error)},
                   {"short_slices", e.short_slices}};
  }
  return j;
}

}  // namespace r3::check
