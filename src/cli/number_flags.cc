#include "cli/number_flags.h"

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

}  // namespace r3::cli
