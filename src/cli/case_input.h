// Reading case files named on the command line ("-" is standard input) and
// listing the case files of a corpus folder.
#ifndef R3_CLI_CASE_INPUT_H_
#define R3_CLI_CASE_INPUT_H_

#include <string>
#include <vector>

#include "r3/case/case.h"

namespace r3::cli {

Case ReadCaseArg(const std::string& path);

// How reports name an input: the path, or "<stdin>" for "-".
std::string DisplayName(const std::string& path);

// r3::ListCaseFiles (r3/case/corpus.h), its errors as usage errors.
std::vector<std::string> ListCorpusFolder(const std::string& dir);

}  // namespace r3::cli

#endif  // R3_CLI_CASE_INPUT_H_
