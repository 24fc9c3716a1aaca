#include "r3/gpu/gpu.h"

#include "r3/case/case_format.h"

namespace r3::gpu {

uint64_t CaseSeed(const Case& c) {
  // FNV-1a over the printed case: stable across builds and machines.
  uint64_t h = 0xCBF29CE484222325ull;
  for (const unsigned char ch : PrintCase(c)) {
    h ^= ch;
    h *= 0x100000001B3ull;
  }
  return h;
}

bool GpuCaseResult::Passes() const {
  if (!result.PassesOrKnown()) return false;
  return wrong_values == 0 || !result.verdict.ok();
}

std::string GpuCaseResult::Summary() const {
  std::string line = "gpu: " + mode + ", " + std::to_string(steps) + " step(s), " +
                     std::to_string(values_checked) + " values checked, " +
                     std::to_string(wrong_values) + " wrong";
  if (first_mismatch) {
    const Mismatch& m = *first_mismatch;
    line += "; first mismatch: rank dp=" + std::to_string(m.dp) + " tp=" + std::to_string(m.tp) +
            " row " + std::to_string(m.row) + " layer " + std::to_string(m.layer) + " k " +
            std::to_string(m.k) + ": got " + std::to_string(m.got) + ", expected " +
            std::to_string(m.expected);
  }
  return line + "\n";
}

}  // namespace r3::gpu
