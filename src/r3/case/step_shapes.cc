#include "r3/case/step_shapes.h"

#include <algorithm>
#include <utility>

namespace r3 {

Step EagerStep(std::vector<int64_t> tokens) {
  Step s;
  s.padded = tokens;
  s.tokens = std::move(tokens);
  return s;
}

Step UniformStep(std::vector<int64_t> tokens, int64_t n) {
  Step s;
  s.padded.assign(tokens.size(), n);
  s.tokens = std::move(tokens);
  return s;
}

Step WarmupStep(int64_t dp, int64_t m) {
  return EagerStep(std::vector<int64_t>(static_cast<size_t>(dp), m));
}

Step LoneTokenStep(int64_t dp, int64_t lone) {
  std::vector<int64_t> tokens(static_cast<size_t>(dp), 0);
  tokens[static_cast<size_t>(lone)] = 1;
  return EagerStep(std::move(tokens));
}

bool IsLoneToken(const Case& c) {
  const std::vector<int64_t>& t = c.step.tokens;
  if (c.config.dp < 2 || t != c.step.padded) return false;
  return std::count(t.begin(), t.end(), 1) == 1 &&
         std::count(t.begin(), t.end(), 0) == c.config.dp - 1;
}

std::vector<int64_t> CaptureSizesUpTo(int64_t max_tokens) {
  std::vector<int64_t> sizes;
  for (int64_t s = 1; s <= max_tokens;) {
    sizes.push_back(s);
    s = s < 8 ? (s == 4 ? 8 : s * 2) : (s < 256 ? s + 8 : s + 16);
    if (s > 512) break;
  }
  return sizes;
}

std::optional<int64_t> CaptureSizeFor(int64_t tokens, int64_t max_tokens) {
  for (int64_t s : CaptureSizesUpTo(max_tokens)) {
    if (s >= tokens) return s;
  }
  return std::nullopt;
}

}  // namespace r3
