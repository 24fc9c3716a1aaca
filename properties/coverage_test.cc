// Coverage of the space: the all-invariants property runs with every case
// tagged by its classes (RC_CLASSIFY), and the run fails when a class that
// matters falls under its floor (case_classes.cc; docs/properties.md says
// why each floor). RapidCheck's own distribution is what is measured.
#include <algorithm>
#include <iostream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "properties/case_classes.h"
#include "properties/invariant_property.h"

namespace r3::props {
namespace {

// RapidCheck shows string tags quoted.
std::string Unquote(std::string tag) {
  if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') return tag.substr(1, tag.size() - 2);
  return tag;
}

TEST(Coverage, EveryImportantClassIsAboveItsFloor) {
  // The global configuration keeps RC_PARAMS (seed=..., max_success=...);
  // at least 1000 cases so the floors are far from sampling noise.
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::max(params.maxSuccess, 1000);
  rc::detail::TestMetadata metadata;
  metadata.id = "Coverage/EveryImportantClassIsAboveItsFloor";
  const rc::detail::TestResult result =
      rc::detail::checkTestable([] { AllInvariantsHold(sut::SutOptions{}); }, metadata, params);
  rc::detail::SuccessResult success;
  if (!result.match(success)) {
    std::ostringstream text;
    rc::detail::printResultMessage(result, text);
    FAIL() << text.str();
  }
  std::map<std::string, int> counts;
  for (const auto& [tags, count] : success.distribution) {
    for (const std::string& tag : tags) counts[Unquote(tag)] += count;
  }
  const double total = success.numSuccess;
  std::cout << "classes over " << success.numSuccess << " cases (seed " << params.seed << "):\n";
  for (const auto& [name, count] : counts) {
    std::cout << "  " << name << ": " << count << " (" << 100.0 * count / total << "%)\n";
  }
  for (const ClassFloor& floor : ClassFloors()) {
    const double share = counts[std::string(floor.name)] / total;
    EXPECT_GE(share, floor.min_fraction)
        << "class " << floor.name << " is " << 100 * share << "% of generated cases, under its "
        << 100 * floor.min_fraction << "% floor: the generator no longer covers it";
  }
}

}  // namespace
}  // namespace r3::props
