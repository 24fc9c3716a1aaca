// Machine-readable results of check and verify, for CI: --json (one JSON
// document on stdout instead of the text report) and --junit FILE (one
// testcase per case; a failure carries the verdict and the case text). Both
// are written from the same records.
#ifndef R3_CLI_CI_REPORT_H_
#define R3_CLI_CI_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "r3/case/case.h"
#include "r3/check/run_case.h"
#include "r3/sut/sut.h"

namespace r3::cli {

struct CaseRecord {
  std::string source;   // a path, "<stdin>" or "generated case N (seed S)"
  std::string group;    // check: "check"; verify: regressions|seeds|findings|generated
  std::string verdict;  // "pass", "pass-known" or "fail"
  std::string text;     // the text report of a failure ("" when it passed)
  nlohmann::ordered_json detail;  // settings, case text, violations ({} for a pass
                                  // that need not be listed)
};

// The record of one judged case; `listed`: keep its settings and violations
// even when it passes (check lists every case; verify only failures).
CaseRecord MakeRecord(const std::string& source, const std::string& group, const Case& c,
                      const check::CaseResult& result, const sut::Producer& producer,
                      bool listed);

// {"source", "group", "verdict", "ok", "case": settings, "case_text",
//  "violations", and "device" when a GPU producer made the observation}.
nlohmann::ordered_json RecordJson(const CaseRecord& record);

// JUnit XML (the schema CI services read): a testsuite per group, a testcase
// per record named by its source; failures hold the text report and the
// case text. Throws UsageError naming --junit when the file cannot be written.
void WriteJunit(const std::string& path, const std::string& name,
                const std::vector<CaseRecord>& records);

// A JUnit report of a run that ended in error (exit 2 or 3): one testcase
// with an <error> holding `message`, so CI shows red, not an earlier green.
std::string JunitErrorXml(const std::string& message);

}  // namespace r3::cli

#endif  // R3_CLI_CI_REPORT_H_
