// Files the commands write on request (--svg, --junit, --save-failures).
#ifndef R3_CLI_OUTPUT_FILE_H_
#define R3_CLI_OUTPUT_FILE_H_

#include <string>

namespace r3::cli {

// Writes `text` to `path` (replacing it); throws UsageError "FLAG: cannot
// write PATH (reason)" when it cannot.
void WriteOutputFile(const std::string& flag, const std::string& path, const std::string& text);

}  // namespace r3::cli

#endif  // R3_CLI_OUTPUT_FILE_H_
