// main() of every GPU test binary: exit 77 (Meson's SKIP) when there is no
// GPU or driver, so CPU-only CI skips the suite cleanly.
#include <cstdio>
#include <cstdlib>

#include <gtest/gtest.h>

#include "r3/gpu/gpu.h"

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/1);
  const r3::gpu::Availability gpus = r3::gpu::ProbeGpus();
  if (!gpus.ok()) {
    std::printf("SKIP: no GPU (%s)\n", gpus.detail.c_str());
    return 77;
  }
  std::printf("GPUs: %d (%s)\n", gpus.devices, gpus.detail.c_str());
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
