// Violations that today's vLLM (the default SUT) is known to commit. They
// are findings about vLLM, not r3check bugs: the invariants stay as they are,
// and each finding is pinned by a minimal case under corpus/findings/ so a
// change in vLLM's behaviour (fixed, or failing differently) is noticed.
#ifndef R3_CHECK_KNOWN_FINDINGS_H_
#define R3_CHECK_KNOWN_FINDINGS_H_

#include <span>
#include <string_view>

#include "r3/case/case.h"
#include "r3/check/verdict.h"
#include "r3/sut/observation.h"

namespace r3::check {

struct KnownFinding {
  std::string_view id;
  std::string_view summary;
  // True when `v` is an instance of this finding.
  bool (*matches)(const Case& c, const sut::Observation& obs, const Violation& v);
};

std::span<const KnownFinding> KnownFindings();

// The finding that explains `v`, or nullptr.
const KnownFinding* ExplainViolation(const Case& c, const sut::Observation& obs,
                                     const Violation& v);

}  // namespace r3::check

#endif  // R3_CHECK_KNOWN_FINDINGS_H_
