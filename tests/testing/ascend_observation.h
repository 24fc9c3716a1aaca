// What a correct vllm-ascend capture reports for a case: r3check's
// dispatch plan (its comm type's kernel rows), every rank holding its DP
// rank's own rows, an int32 snapshot. Header-only, for test producers.
#ifndef R3_TESTS_TESTING_ASCEND_OBSERVATION_H_
#define R3_TESTS_TESTING_ASCEND_OBSERVATION_H_

#include "r3/case/case.h"
#include "r3/case/layout_domain.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/sut.h"

namespace r3::testing {

inline constexpr LayoutDomain kAscendDomain{.internal_dispatch = false, .vllm_findings = false,
                                            .vllm_dispatch = false, .ascend_comm = true};

inline sut::Observation AscendOwnRows(const Case& c, const sut::SutOptions& options) {
  sut::Observation obs =
      sut::ObserveDispatch(c, options, sut::PlanDispatch(c, {}), sut::Capturer::kEngine);
  for (sut::RankObservation& r : obs.ranks) {
    r.captured.clear();
    AppendRun(r.captured, {r.dp, 0, c.step.padded[static_cast<size_t>(r.dp)]});
  }
  obs.snapshot_dtype = "int32";
  obs.snapshot_max_id = 2147483647;
  return obs;
}

}  // namespace r3::testing

#endif  // R3_TESTS_TESTING_ASCEND_OBSERVATION_H_
