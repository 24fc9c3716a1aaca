// Approval files: a test's output is compared with its approved copy in
// tests/testdata/approved/; R3_UPDATE_APPROVALS=1 rewrites the copy instead,
// for an intended change, whose diff the commit then shows.
#ifndef R3_TESTS_TESTING_APPROVAL_H_
#define R3_TESTS_TESTING_APPROVAL_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "r3check_config.h"

namespace r3::testing {

// `what` names what changed in the failure message ("report format").
inline void ExpectApproved(const std::string& name, const std::string& actual,
                           const std::string& what) {
  const std::string path = std::string(R3CHECK_TESTDATA) + "/approved/" + name;
  const char* update = std::getenv("R3_UPDATE_APPROVALS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  std::stringstream approved;
  approved << in.rdbuf();
  EXPECT_EQ(actual, approved.str()) << what << " changed: " << path;
}

}  // namespace r3::testing

#endif  // R3_TESTS_TESTING_APPROVAL_H_
