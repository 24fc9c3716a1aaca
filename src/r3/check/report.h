// Human-readable and JSON reports of a CaseResult: the verdict of `check`
// and the layout walk-through of `explain`.
#ifndef R3_CHECK_REPORT_H_
#define R3_CHECK_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "r3/case/case.h"
#include "r3/check/run_case.h"
#include "r3/sut/producer.h"

namespace r3::check {

// "sut vllm-post-50874, policy pr50874[, mutant NAME]"
std::string DescribeOptions(const sut::Producer& producer);

// One verdict: a PASS/FAIL headline, then each violation (capped at
// `max_violations` lines, with a count of the rest).
std::string VerdictText(const std::string& source, const CaseResult& result,
                        const sut::Producer& producer, size_t max_violations = 12);

// The layout in words, an ASCII strip per distinct gathered tensor, and per
// rank: n, branch, captured and expected rows.
std::string ExplainText(const Case& c, const CaseResult& result, const sut::Producer& producer);

nlohmann::ordered_json ExplainJson(const Case& c, const CaseResult& result,
                                   const sut::Producer& producer);

// {"sut", "policy", "mutants"}: DescribeOptions as JSON.
nlohmann::ordered_json OptionsJson(const sut::Producer& producer);

// What a device producer checked: "gpu: MODE, S step(s), V values checked,
// W wrong[; first mismatch: ...]" and a newline; empty for other producers.
std::string DeviceLine(const sut::Observation& observation);

// The same as JSON; null for other producers.
nlohmann::ordered_json DeviceJson(const sut::Observation& observation);

// "pass" (no violation), "pass-known" (only known findings) or "fail".
std::string VerdictWord(const CaseResult& result);

// Each violation: invariant number and name, dp, tp, message, known_finding
// (its id or null). The same list in explain --json and check/verify --json.
nlohmann::ordered_json ViolationsJson(const CaseResult& result);

}  // namespace r3::check

#endif  // R3_CHECK_REPORT_H_
