// ASCII strip of a row tensor: one character per row (or per block of rows
// for large tensors), the owner's DP rank as a digit/letter, '.' for SP
// padding, followed by a legend of offsets.
#ifndef R3_CHECK_STRIP_H_
#define R3_CHECK_STRIP_H_

#include <string>

#include "r3/case/rows.h"

namespace r3::check {

// At most `width` characters wide; every run gets at least one character.
std::string RenderStrip(const RowRuns& runs, int width = 64);

// "[0..5) dp0[0..5)  [5..6) pad1 ...": the tensor's rows, then what they hold in
// DescribeRuns' notation, one run per entry.
std::string RenderLegend(const RowRuns& runs, size_t max_runs = 16);

}  // namespace r3::check

#endif  // R3_CHECK_STRIP_H_
