#include "cli/case_input.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "r3/case/case_format.h"

namespace r3::cli {

Case ReadCaseArg(const std::string& path) {
  if (path == "-") return ReadCase(std::cin, "<stdin>");
  return LoadCaseFile(path);
}

std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::vector<std::string> ListCaseFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".r3case") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string DefaultCorpusDir() {
  if (const char* env = std::getenv("R3CHECK_CORPUS"); env != nullptr && *env != '\0') return env;
  return R3CHECK_SOURCE_CORPUS;
}

}  // namespace r3::cli
