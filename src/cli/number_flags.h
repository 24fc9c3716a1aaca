// Whole-number flag values read strictly (CLI11 alone wraps "-3" to 2^64 - 3
// and clamps 2^64 to 2^64 - 1 for an unsigned option: a mistyped seed would
// silently run other cases).
#ifndef R3_CLI_NUMBER_FLAGS_H_
#define R3_CLI_NUMBER_FLAGS_H_

#include <charconv>
#include <string_view>

#include <CLI/CLI.hpp>

namespace r3::cli {

// The whole of `text` as a number of type T; false for anything else (a
// sign on an unsigned, a trailing character, out of range).
template <typename T>
bool ParseWhole(std::string_view text, T* value) {
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, *value);
  return !text.empty() && error == std::errc() && stop == end;
}

// A check for a whole-number option that CLI11 would otherwise also read in
// hex, octal or binary ("0x10" and "020" as 16): a 0x/0o/0b prefix is
// refused ("must be a whole number in decimal, not '0x10'"), leading zeros
// are dropped; anything else is left to the option's own conversion.
CLI::Validator Decimal();

// A check for a uint64_t option: "must be an integer in [0, 2^64 - 1]".
CLI::Validator Unsigned64();

}  // namespace r3::cli

#endif  // R3_CLI_NUMBER_FLAGS_H_
