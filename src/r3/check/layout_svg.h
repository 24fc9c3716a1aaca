// Pictures of a checked case, as SVG (r3check explain --svg, sizing --svg).
// Text reports stay the reference; these are for people reading a failure.
#ifndef R3_CHECK_LAYOUT_SVG_H_
#define R3_CHECK_LAYOUT_SVG_H_

#include <string>

#include "r3/case/case.h"
#include "r3/check/run_case.h"
#include "r3/sut/producer.h"

namespace r3::check {

// Each distinct gathered tensor to scale (a colour per owning DP rank, SP
// padding hatched), then per rank its captured rows over its expected rows at
// the same scale, a wrong rank in red. Up to 64 ranks are drawn one per line;
// past that only the wrong ones, with a count of the rest.
std::string LayoutSvg(const Case& c, const CaseResult& result, const sut::Producer& producer);

// Each sizing policy's replay-buffer rows against the exact bound, over M
// (max_num_batched_tokens) from 1 to 2^20 on log axes, for the case's other
// settings; the case's own M is marked.
std::string SizingSvg(const Case& c, const sut::MutantSet& mutants);

}  // namespace r3::check

#endif  // R3_CHECK_LAYOUT_SVG_H_
