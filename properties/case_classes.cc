#include "properties/case_classes.h"

#include <algorithm>
#include <array>

#include <rapidcheck.h>

#include "r3/case/step_shapes.h"


namespace r3::props {
namespace {

// Floors, as fractions of generated cases. The generator's expected share
// of each class (measured over 20000 cases, docs/properties.md) is at least
// 2.5x its floor, so with the coverage run's 1000 cases a miss is a real
// regression of the generator, not chance (> 7 standard deviations).
constexpr std::array<ClassFloor, 14> kFloors = {{
    {"dispatch:no-dp", 0.05},
    {"dispatch:naive-dp", 0.10},
    {"dispatch:naive-ep-sp", 0.12},
    {"dispatch:internal", 0.05},
    {"dispatch:internal-sp", 0.05},
    {"sp-padding", 0.12},
    {"ragged", 0.15},
    {"graph-padded", 0.11},
    {"zero-token-rank", 0.15},
    {"warmup", 0.08},
    {"decode", 0.07},
    {"not-divisible-tp", 0.25},
    {"experts-uint8-edge", 0.13},
    {"experts-past-int16", 0.05},
}};

// Floors for kRareClassCases cases, with the same margins (share >= 2.5x
// floor, > 7 standard deviations above it at that count).
constexpr std::array<ClassFloor, 5> kRareFloors = {{
    {"lone-token", 0.024},
    {"lone-token:naive-ep-sp", 0.008},
    {"lone-token:naive-dp", 0.0085},
    {"lone-token:internal-sp", 0.0035},
    {"lone-token:internal", 0.0035},
}};

}  // namespace

std::string_view DispatchClass(const Case& c) {
  const Config& cfg = c.config;
  if (cfg.dp == 1) return "dispatch:no-dp";
  const bool sp = SpEnabled(cfg);
  if (cfg.dispatch == Dispatch::kNaive) return sp ? "dispatch:naive-ep-sp" : "dispatch:naive-dp";
  return sp ? "dispatch:internal-sp" : "dispatch:internal";
}

std::vector<std::string> CaseClasses(const Case& c) {
  const Config& cfg = c.config;
  const Step& s = c.step;
  std::vector<std::string> out = {std::string(DispatchClass(c))};
  const bool sp = SpEnabled(cfg);
  const auto any = [&](auto pred) {
    for (size_t d = 0; d < s.padded.size(); ++d) {
      if (pred(s.tokens[d], s.padded[d])) return true;
    }
    return false;
  };
  const auto all = [&](auto pred) {
    return !any([&](int64_t t, int64_t n) { return !pred(t, n); });
  };
  const int64_t n0 = s.padded.empty() ? 0 : s.padded[0];
  const int64_t m = cfg.max_num_batched_tokens;
  if (sp && any([&](int64_t, int64_t n) { return n % cfg.tp != 0; })) out.push_back("sp-padding");
  if (all([&](int64_t, int64_t n) { return n == n0; })) {
    out.push_back("uniform");
  } else {
    out.push_back("ragged");
  }
  if (any([](int64_t t, int64_t n) { return n > t; })) out.push_back("graph-padded");
  if (any([](int64_t t, int64_t) { return t == 0; })) out.push_back("zero-token-rank");
  if (all([&](int64_t t, int64_t n) { return t == m && n == m; })) out.push_back("warmup");
  if (all([](int64_t t, int64_t n) { return n == 1 && t <= 1; })) out.push_back("decode");
  if (cfg.tp > 1 && any([&](int64_t, int64_t n) { return n % cfg.tp != 0; })) {
    out.push_back("not-divisible-tp");
  }
  if (cfg.num_experts > 128 && cfg.num_experts <= 256) out.push_back("experts-uint8-edge");
  if (cfg.num_experts > 32768) out.push_back("experts-past-int16");
  if (IsLoneToken(c)) {
    out.push_back("lone-token");
    out.push_back("lone-token:" + std::string(DispatchClass(c).substr(9)));  // after "dispatch:"
  }
  return out;
}

std::span<const ClassFloor> ClassFloors() { return kFloors; }

std::span<const ClassFloor> RareClassFloors() { return kRareFloors; }

void ClassifyForRapidCheck(const Case& c) {
  for (const std::string& name : CaseClasses(c)) RC_CLASSIFY(true, name);
}

}  // namespace r3::props
