// Overflow-checked int64 arithmetic. Every size the model or a SUT derives
// goes through these, so a case near the limits cannot wrap silently.
#ifndef R3_CASE_CHECKED_MATH_H_
#define R3_CASE_CHECKED_MATH_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace r3 {

class OverflowError : public std::overflow_error {
 public:
  explicit OverflowError(const std::string& what) : std::overflow_error(what) {}
};

inline int64_t CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) throw OverflowError("int64 overflow in addition");
  return out;
}

inline int64_t CheckedMul(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_mul_overflow(a, b, &out)) throw OverflowError("int64 overflow in multiplication");
  return out;
}

// Ceiling division for a >= 0, b > 0, written so that it cannot overflow.
inline int64_t CeilDiv(int64_t a, int64_t b) {
  if (a < 0 || b <= 0) throw std::invalid_argument("CeilDiv needs a >= 0 and b > 0");
  return a / b + (a % b != 0 ? 1 : 0);
}

inline int64_t CheckedSum(const std::vector<int64_t>& values) {
  int64_t total = 0;
  for (int64_t v : values) total = CheckedAdd(total, v);
  return total;
}

}  // namespace r3

#endif  // R3_CASE_CHECKED_MATH_H_
