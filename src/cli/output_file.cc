#include "cli/output_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli/sut_flags.h"

namespace r3::cli {

void WriteOutputFile(const std::string& flag, const std::string& path, const std::string& text) {
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
