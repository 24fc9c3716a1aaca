#include "r3/case/corpus.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace r3 {

std::vector<std::string> ListCaseFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return files;
  // The non-throwing calls, so that the error names the file.
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::filesystem::path& path = it->path();
    if (path.extension() != ".r3case") continue;
    std::error_code stat_ec;
    const bool regular = it->is_regular_file(stat_ec);
    if (stat_ec) throw CorpusError("corpus: cannot read " + path.string() + ": " + stat_ec.message());
    if (regular) files.push_back(path.string());
  }
  if (ec) throw CorpusError("corpus: cannot list " + dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace r3
