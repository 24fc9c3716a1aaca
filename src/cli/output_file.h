// Files the commands write on request (--svg, --junit, --save-failures).
#ifndef R3_CLI_OUTPUT_FILE_H_
#define R3_CLI_OUTPUT_FILE_H_

#include <string>

namespace r3::cli {

// Checks, before a run, that WriteOutputFile could write `path`: throws
// UsageError "FLAG: cannot write PATH (reason)" (or names a folder).
void ProbeOutputFile(const std::string& flag, const std::string& path);

// Writes `text` to `path` (replacing it) through a temporary file beside it,
// renamed when complete, so a failure leaves the old file or none, never a
// part; a device or pipe (/dev/stdout) is written in place. Throws
// UsageError "FLAG: cannot write PATH (reason)" when it cannot.
void WriteOutputFile(const std::string& flag, const std::string& path, const std::string& text);

}  // namespace r3::cli

#endif  // R3_CLI_OUTPUT_FILE_H_
