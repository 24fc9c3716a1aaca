#include "cli/data_dirs.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "r3check_config.h"

namespace r3::cli {

std::string InstalledDataDir() {
  // Where /proc/self/exe cannot be read, the path is relative: not taken.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir =
      (exe.parent_path() / R3CHECK_DATA_FROM_BINDIR).lexically_normal();
  return dir.is_absolute() && std::filesystem::is_directory(dir, ec) ? dir.string() : "";
}

std::string ShippedCorpusDir() {
  const std::string data = InstalledDataDir();
  return data.empty() ? R3CHECK_SOURCE_CORPUS : data + "/corpus";
}

std::string DefaultCorpusDir() {
  if (const char* env = std::getenv("R3CHECK_CORPUS"); env != nullptr && *env != '\0') return env;
  return ShippedCorpusDir();
}

std::string DefaultEnginesDir() {
  if (const char* env = std::getenv("R3_ENGINES_DIR"); env != nullptr && *env != '\0') return env;
  const std::string data = InstalledDataDir();
  return data.empty() ? R3CHECK_SOURCE_ENGINES : data + "/engines";
}

}  // namespace r3::cli
