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

}  // namespace r3::gpu
