#include "cli/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace r3::cli {

TempDir::TempDir(const std::string& prefix) {
  const char* env = std::getenv("TMPDIR");
  const std::string base = env != nullptr && *env != '\0' ? env : "/tmp";
  std::string pattern = base + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary folder under " + base + ": " +
                             std::strerror(errno));
  }
  path_ = buffer.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace r3::cli
