#include "cli/output_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli/output_guard.h"
#include "cli/sut_flags.h"

namespace r3::cli {

void WriteOutputFile(const std::string& flag, const std::string& path, const std::string& text) {
  // The last line of defence: whatever claimed it, an input stays as it is.
  if (IsInput(path)) throw UsageError(flag + ": " + path + " is also an input of this run; not writing it");
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << text;
  if (out) out.flush();
  if (!out) {
    const std::string reason = errno != 0 ? std::strerror(errno) : "write failed";
    throw UsageError(flag + ": cannot write " + path + " (" + reason + ")");
  }
}

}  // namespace r3::cli
