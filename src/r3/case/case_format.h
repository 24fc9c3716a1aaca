// The r3case text format, version 1: the one format for CLI input, corpus
// entries, regression cases and shrunk counterexamples.
//
//   r3case 1
//   dp 2
//   tp 2
//   ep on                     # on | off
//   dispatch naive            # naive | internal
//   sp auto                   # auto | on | off
//   max_num_batched_tokens 8192
//   top_k 8
//   num_experts 256
//   num_layers 1
//   tokens 5 3                # one value per DP rank
//   padded 5 3                # optional, defaults to tokens
//
// Parsing is strict; printing is canonical (fixed key order, `padded` only
// when it differs from `tokens`), so ParseCase(PrintCase(c)) == c.
#ifndef R3_CASE_CASE_FORMAT_H_
#define R3_CASE_CASE_FORMAT_H_

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>

#include "r3/case/case.h"

namespace r3 {

// One line, "SOURCE:LINE: field: what is wrong".
class CaseFormatError : public std::runtime_error {
 public:
  explicit CaseFormatError(const std::string& what) : std::runtime_error(what) {}
};

// `source` names the input in error messages (a path, or "<stdin>").
Case ParseCase(std::string_view text, std::string_view source);

// Reads and parses a file; a missing file is a CaseFormatError too.
Case LoadCaseFile(const std::string& path);

// Reads a case from a stream (standard input), named `source` in errors. Stops
// reading past the size limit instead of reading an endless stream.
Case ReadCase(std::istream& in, const std::string& source);

std::string PrintCase(const Case& c);

}  // namespace r3

#endif  // R3_CASE_CASE_FORMAT_H_
