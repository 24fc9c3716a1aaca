// A RapidCheck listener that swallows the progress events, for properties
// run programmatically (rc::detail::checkTestable) whose caller reports.
#ifndef R3_PROPERTIES_QUIET_LISTENER_H_
#define R3_PROPERTIES_QUIET_LISTENER_H_

#include <rapidcheck.h>

namespace r3::props {

class QuietListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace r3::props

#endif  // R3_PROPERTIES_QUIET_LISTENER_H_
