#include "r3/sut/replay_sizing.h"

#include <array>

#include "r3/case/checked_math.h"
#include "r3/sut/internal/dispatch.h"

namespace r3::sut {
namespace {

constexpr std::array<PolicyInfo, 3> kPolicies = {{
    {Policy::kLegacy, "legacy", "before #50874: max_num_batched_tokens rows"},
    {Policy::kPr50874, "pr50874", "#50874: M * (EP size if EP else DP size) rows"},
    {Policy::kTight, "tight", "the kernel rows of the warmup step (every DP rank at M)"},
}};

}  // namespace

std::span<const PolicyInfo> PolicyCatalogue() { return kPolicies; }

std::optional<Policy> FindPolicy(std::string_view name) {
  for (const PolicyInfo& info : kPolicies) {
    if (info.name == name) return info.id;
  }
  return std::nullopt;
}

std::string_view PolicyName(Policy policy) {
  for (const PolicyInfo& info : kPolicies) {
    if (info.id == policy) return info.name;
  }
  return "?";
}

int64_t ReplayBufferRows(const Config& config, Policy policy, const MutantSet& mutants) {
  const int64_t m = config.max_num_batched_tokens;
  switch (policy) {
    case Policy::kLegacy:
      return m;
    case Policy::kPr50874: {
      const int64_t ep_size = CheckedMul(config.dp, config.tp);
      const bool by_ep = config.ep && !mutants.has(Mutant::kSizeByDpWithEp);
      return CheckedMul(m, by_ep ? ep_size : config.dp);
    }
    case Policy::kTight:
      return internal::WorstCaseKernelRows(config);
  }
  return m;
}

}  // namespace r3::sut
