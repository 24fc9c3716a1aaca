#include "cli/case_input.h"

#include <filesystem>
#include <iostream>
#include <system_error>

#include "cli/output_guard.h"
#include "cli/sut_flags.h"
#include "r3/case/case_format.h"
#include "r3/case/corpus.h"

namespace r3::cli {

Case ReadCaseArg(const std::string& path) {
  ClaimInput(path);
  if (path == "-") return ReadCase(std::cin, "<stdin>");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UsageError(path + " is a directory; give case files (" + path +
                     "/*.r3case), or use verify --corpus DIR");
  }
  return LoadCaseFile(path);
}

std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::vector<std::string> ListCorpusFolder(const std::string& dir) {
  try {
    return ListCaseFiles(dir);
  } catch (const CorpusError& e) {
    throw UsageError(e.what());  // bad input: exit 2, not an internal error
  }
}

}  // namespace r3::cli
