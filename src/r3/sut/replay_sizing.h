// vLLM's replay-buffer sizing policies for the monolithic MoE kernel.
#ifndef R3_SUT_REPLAY_SIZING_H_
#define R3_SUT_REPLAY_SIZING_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "r3/case/case.h"
#include "r3/sut/mutants.h"

namespace r3::sut {

enum class Policy {
  kLegacy,   // before #50874: M rows
  kPr50874,  // M * (E if EP else D)
  kTight,    // the rows of the worst step the dispatcher can produce
};

struct PolicyInfo {
  Policy id;
  std::string_view name;
  std::string_view description;
};

std::span<const PolicyInfo> PolicyCatalogue();
std::optional<Policy> FindPolicy(std::string_view name);
std::string_view PolicyName(Policy policy);

int64_t ReplayBufferRows(const Config& config, Policy policy, const MutantSet& mutants);

}  // namespace r3::sut

#endif  // R3_SUT_REPLAY_SIZING_H_
