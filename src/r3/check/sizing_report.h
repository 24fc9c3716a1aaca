// Replay-buffer sizing for a configuration: the exact bound and, for each
// policy, its rows, whether it is safe, its slack and its memory.
#ifndef R3_CHECK_SIZING_REPORT_H_
#define R3_CHECK_SIZING_REPORT_H_

#include <cstdint>
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

struct SizingReport {
  int64_t required_rows = 0;  // exact bound over every legal step
  int64_t step_kernel_rows = 0;  // what this case's step hands the kernel
  std::vector<PolicySizing> policies;
};

SizingReport BuildSizingReport(const Case& c, const sut::MutantSet& mutants);
std::string SizingText(const Case& c, const SizingReport& report);
nlohmann::ordered_json SizingJson(const SizingReport& report);

}  // namespace r3::check

#endif  // R3_CHECK_SIZING_REPORT_H_
