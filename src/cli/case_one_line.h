// A case on one line, for tables that give each entry one line (`sweep`):
// the r3case text without its header, its lines joined by "; ". Replacing
// each "; " by a newline under an "r3case 1" line gives the case file back.
#ifndef R3_CLI_CASE_ONE_LINE_H_
#define R3_CLI_CASE_ONE_LINE_H_

#include <string>

#include "r3/case/case.h"

namespace r3::cli {

// "dp 2; tp 2; ep on; dispatch naive; sp auto; max_num_batched_tokens 8; ..."
std::string CaseOneLine(const Case& c);

}  // namespace r3::cli

#endif  // R3_CLI_CASE_ONE_LINE_H_
