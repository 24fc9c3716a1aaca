// The deterministic routing fill shared by the GPU kernels and the host-side
// decoder: topk_ids[row][k] of DP rank `dp`, token `token` is a pure function
// of (case seed, dp, token, k). Expert ids stay below min(num_experts, 2^15)
// so every value survives the int16 replay buffer; SP padding rows carry
// kPoison and never-written capturer cells keep kUnwritten.
#ifndef R3_GPU_FILL_H_
#define R3_GPU_FILL_H_

#include <cstdint>

#ifdef __CUDACC__
#define R3_HOST_DEVICE __host__ __device__
#else
#define R3_HOST_DEVICE
#endif

namespace r3::gpu {

inline constexpr int32_t kPoison = -1;               // SP padding rows (fits int16)
inline constexpr int32_t kUnwritten = 0x5EEDF00D;    // capturer cells nobody wrote
inline constexpr int64_t kMaxFillId = int64_t{1} << 15;

R3_HOST_DEVICE inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// An expert id in [0, id_space): id_space = min(num_experts, 2^15).
R3_HOST_DEVICE inline int32_t FillValue(uint64_t seed, int64_t dp, int64_t token, int64_t k,
                                        int64_t id_space) {
  const uint64_t h = Mix64(seed ^ Mix64(static_cast<uint64_t>(dp) * 0x100000001B3ull ^
                                        Mix64(static_cast<uint64_t>(token) * 0x2545F4914F6CDD1Dull +
                                              static_cast<uint64_t>(k))));
  return static_cast<int32_t>(h % static_cast<uint64_t>(id_space));
}

// The hash a row of k values is indexed by when a captured row is looked up
// among the step's rows (host decode and the device's row index alike).
R3_HOST_DEVICE inline uint64_t RowHash(const int32_t* values, int64_t k) {
  uint64_t h = 0x243F6A8885A308D3ull;
  for (int64_t i = 0; i < k; ++i) h = Mix64(h ^ static_cast<uint32_t>(values[i]));
  return h;
}

// The device's row index (kernels.h): a slot keeps its last row as
// IndexedRow(dp, token), and a lookup writes per captured row kModelRow
// when it is the model's row (the rank's DP rank's row of that index), else
// the row of the step it is (PackedRow), kNoStepRow when no row of the step
// has its values, or kAskTheHost when the table cannot say (the last row
// with its hash has other values, or the case got no table): the host's
// index decides.
inline constexpr int64_t kNoStepRow = -1;
inline constexpr int64_t kAskTheHost = -2;
inline constexpr int64_t kModelRow = -3;
inline constexpr int kTokenBits = 40;

R3_HOST_DEVICE inline int64_t PackedRow(int64_t dp, int64_t token) {
  return dp << kTokenBits | token;
}
R3_HOST_DEVICE inline int64_t PackedDp(int64_t packed) { return packed >> kTokenBits; }
R3_HOST_DEVICE inline int64_t PackedToken(int64_t packed) {
  return packed & ((int64_t{1} << kTokenBits) - 1);
}
R3_HOST_DEVICE inline unsigned long long IndexedRow(int64_t dp, int64_t token) {
  return static_cast<unsigned long long>(PackedRow(dp, token)) + 1;
}

R3_HOST_DEVICE inline int64_t FillIdSpace(int64_t num_experts) {
  return num_experts < kMaxFillId ? num_experts : kMaxFillId;
}

}  // namespace r3::gpu

#endif  // R3_GPU_FILL_H_
