// Coverage of the space: the all-invariants property runs with every case
// tagged by its classes (RC_CLASSIFY), and the run fails when a class that
// matters falls under its floor (case_classes.cc; docs/properties.md says
// why each floor). RapidCheck's own distribution is what is measured.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "properties/case_classes.h"
#include "properties/case_gen.h"
#include "properties/invariant_property.h"
#include "r3/case/case_format.h"
#include "r3/case/corpus.h"
#include "r3check_config.h"

namespace r3::props {
namespace {

// RapidCheck shows string tags quoted.
std::string Unquote(std::string tag) {
  if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') return tag.substr(1, tag.size() - 2);
  return tag;
}

// Runs `property` over at least `min_cases` cases (RC_PARAMS seed and
// max_success apply) and returns each class's share; fails the test on a
// property failure.
std::map<std::string, double> ClassShares(const char* id, int min_cases,
                                          const std::function<void()>& property) {
  // The global configuration keeps RC_PARAMS (seed=..., max_success=...).
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::max(params.maxSuccess, min_cases);
  rc::detail::TestMetadata metadata;
  metadata.id = id;
  const rc::detail::TestResult result = rc::detail::checkTestable(property, metadata, params);
  rc::detail::SuccessResult success;
  if (!result.match(success)) {
    std::ostringstream text;
    rc::detail::printResultMessage(result, text);
    ADD_FAILURE() << text.str();
    return {};
  }
  std::map<std::string, int> counts;
  for (const auto& [tags, count] : success.distribution) {
    for (const std::string& tag : tags) counts[Unquote(tag)] += count;
  }
  const double total = success.numSuccess;
  std::cout << "classes over " << success.numSuccess << " cases (seed " << params.seed << "):\n";
  std::map<std::string, double> shares;
  for (const auto& [name, count] : counts) {
    shares[name] = count / total;
    std::cout << "  " << name << ": " << count << " (" << 100.0 * count / total << "%)\n";
  }
  return shares;
}

void ExpectAboveFloors(std::map<std::string, double>& shares, std::span<const ClassFloor> floors) {
  for (const ClassFloor& floor : floors) {
    const double share = shares[std::string(floor.name)];
    EXPECT_GE(share, floor.min_fraction)
        << "class " << floor.name << " is " << 100 * share << "% of generated cases, under its "
        << 100 * floor.min_fraction << "% floor: the generator no longer covers it";
  }
}

TEST(Coverage, EveryImportantClassIsAboveItsFloor) {
  // At least 1000 cases so the floors are far from sampling noise.
  std::map<std::string, double> shares = ClassShares(
      "Coverage/EveryImportantClassIsAboveItsFloor", 1000,
      [] { AllInvariantsHold(*sut::MakeHostProducer()); });
  ExpectAboveFloors(shares, ClassFloors());
}

// A lone token (one DP rank with one token, the others idle) under every
// dispatch path: rarer classes, so more cases, classified but not judged
// (the property above judges the same generator's cases).
TEST(Coverage, LoneTokenUnderEveryDispatchPathIsAboveItsFloor) {
  std::map<std::string, double> shares =
      ClassShares("Coverage/LoneTokenUnderEveryDispatchPathIsAboveItsFloor", kRareClassCases,
                  [] { ClassifyForRapidCheck(*GenCase()); });
  ExpectAboveFloors(shares, RareClassFloors());
}

// The seed corpus holds a lone-token case too (it runs first, in
// regressions_test, and in every `verify`).
TEST(Coverage, SeedsIncludeALoneToken) {
  int lone = 0;
  for (const std::string& path : ListCaseFiles(std::string(R3CHECK_SOURCE_CORPUS) + "/seeds")) {
    const std::vector<std::string> classes = CaseClasses(LoadCaseFile(path));
    lone += std::count(classes.begin(), classes.end(), "lone-token") > 0 ? 1 : 0;
  }
  EXPECT_GE(lone, 1) << "no case in corpus/seeds has one DP rank with a single token and the "
                        "other DP ranks idle";
}

}  // namespace
}  // namespace r3::props
