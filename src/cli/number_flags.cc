#include "cli/number_flags.h"

#include <cctype>
#include <cstdint>
#include <string>

namespace r3::cli {

CLI::Validator Unsigned64() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        uint64_t value = 0;
        return ParseWhole(text, &value) ? ""
                                        : "must be an integer in [0, 2^64 - 1], not '" + text + "'";
      },
      "UINT64");
}

CLI::Validator Decimal() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const size_t sign = text.starts_with('-') || text.starts_with('+') ? 1 : 0;
        const std::string_view digits = std::string_view(text).substr(sign);
        // CLI11 reads 0x10, 0o20, 0b10000 and 020 as 16: refuse the prefixes,
        // and drop leading zeros so that what is left reads in decimal.
        if (digits.size() >= 2 && digits[0] == '0' &&
            std::string_view("xXoObB").find(digits[1]) != std::string_view::npos) {
          return "must be a whole number in decimal, not '" + text + "'";
        }
        const size_t first = digits.find_first_not_of('0');
        if (first != 0 && first != std::string_view::npos &&
            std::isdigit(static_cast<unsigned char>(digits[first]))) {
          text = text.substr(0, sign) + std::string(digits.substr(first));
        } else if (first == std::string_view::npos && !digits.empty()) {
          text = text.substr(0, sign) + "0";
        }
        return "";
      },
      "INT");
}

}  // namespace r3::cli
