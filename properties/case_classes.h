// Classes of generated cases, computed from the case itself (not from what
// the generator meant to produce), and the coverage floors the suite holds
// the generator to. docs/properties.md justifies each floor.
#ifndef R3_PROPERTIES_CASE_CLASSES_H_
#define R3_PROPERTIES_CASE_CLASSES_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "r3/case/case.h"

namespace r3::props {

// "dispatch:naive-ep-sp" and friends, one per dispatch path.
std::string_view DispatchClass(const Case& c);

// Every class `c` belongs to: its dispatch class plus any of "sp-padding",
// "ragged", "uniform", "graph-padded", "zero-token-rank", "warmup", "decode",
// "not-divisible-tp", "experts-uint8-edge", "experts-past-int16", and for a
// lone token (DP > 1, one rank with tokens = padded = 1, the others 0)
// "lone-token" and "lone-token:<dispatch path>" ("lone-token:internal-sp").
std::vector<std::string> CaseClasses(const Case& c);

struct ClassFloor {
  std::string_view name;
  double min_fraction;  // of all generated cases
};

// Checked over the all-invariants property's 1000 cases.
std::span<const ClassFloor> ClassFloors();

// Classes too rare for 1000 cases to measure (the lone token under each
// dispatch path, about 1-2% each): checked over kRareClassCases generated
// cases that are classified but not judged.
inline constexpr int kRareClassCases = 20000;
std::span<const ClassFloor> RareClassFloors();

// Tags the current RapidCheck case with CaseClasses(c) (RC_CLASSIFY).
void ClassifyForRapidCheck(const Case& c);

}  // namespace r3::props

#endif  // R3_PROPERTIES_CASE_CLASSES_H_
