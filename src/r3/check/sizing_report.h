// Replay-buffer sizing for a configuration: the exact bound and, for each
// policy, its rows, whether it is safe, its slack and its memory.
#ifndef R3_CHECK_SIZING_REPORT_H_
#define R3_CHECK_SIZING_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "r3/case/case.h"
#include "r3/sut/mutants.h"

namespace r3::check {

struct PolicySizing {
  std::string name;
  int64_t rows = 0;
  bool safe = false;   // rows >= the exact bound
  double slack = 0;    // rows / bound
  int64_t bytes_per_layer = 0;  // rows * top_k * sizeof(int16)
  int64_t bytes_all_layers = 0;
};

// What an engine's own sizing code did with one case (`r3check sizing --sut
// ENGINE`), as plain values: this layer knows no engine.
struct EngineSizing {
  std::string label;       // "vllm sizing: FusedMoEExpertsMonolithic (modular_kernel.py, ...)"
  int64_t rows = 0;        // the smallest buffer any rank allocated
  int64_t max_rows = 0;    // the largest (== rows when the ranks agree)
  int64_t kernel_rows = 0;  // the most rows any rank's kernel got this step
  std::string step_error;  // the first buffer-check exception of this step, if any
  int64_t short_slices = 0;  // ranks whose kernel got a slice shorter than its input
  int64_t shortest_slice = -1;  // the shortest such slice's rows
};

struct SizingReport {
  int64_t required_rows = 0;  // exact bound over every legal step
  int64_t step_kernel_rows = 0;  // what this case's step hands the kernel
  std::vector<PolicySizing> policies;
  // The engine's own sizing, beside the built-in policies (absent: none).
  std::optional<PolicySizing> engine;
  EngineSizing engine_step;
};

SizingReport BuildSizingReport(const Case& c, const sut::MutantSet& mutants,
                               const std::optional<EngineSizing>& engine = std::nullopt);
std::string SizingText(const Case& c, const SizingReport& report);
nlohmann::ordered_json SizingJson(const SizingReport& report);

}  // namespace r3::check

#endif  // R3_CHECK_SIZING_REPORT_H_
