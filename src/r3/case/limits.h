// Bounds on every field of a case. They keep all derived quantities
// (gathered rows, buffer bytes) well inside int64 and make absurd inputs a
// field error instead of an allocation failure.
#ifndef R3_CASE_LIMITS_H_
#define R3_CASE_LIMITS_H_

#include <cstdint>

namespace r3 {

inline constexpr int64_t kMaxDp = 1024;
inline constexpr int64_t kMaxTp = 64;
inline constexpr int64_t kMaxBatchedTokens = int64_t{1} << 20;
inline constexpr int64_t kMaxTopK = 256;
inline constexpr int64_t kMaxExperts = int64_t{1} << 20;
inline constexpr int64_t kMaxLayers = 4096;

}  // namespace r3

#endif  // R3_CASE_LIMITS_H_
