#include "cli/case_input.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli/sut_flags.h"
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
  if (!std::filesystem::is_directory(dir, ec)) return files;  // a corpus may lack a folder
  // The non-throwing calls: a case file that cannot be looked at (a symlink
  // loop, no permission) is bad input naming the file, not an internal error.
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::filesystem::path& path = it->path();
    if (path.extension() != ".r3case") continue;
    std::error_code stat_ec;
    const bool regular = it->is_regular_file(stat_ec);
    if (stat_ec) throw UsageError("corpus: cannot read " + path.string() + ": " + stat_ec.message());
    if (regular) files.push_back(path.string());
  }
  if (ec) throw UsageError("corpus: cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace r3::cli
