// The kill matrix: every non-GPU mutant of the catalogue, vllm-pre-50874 and
// the pre-#50874 (legacy) sizing must be caught by the invariant properties
// within RapidCheck's default 100 cases; the equivalent mutant and the tight
// policy must survive. Fixed seed, so the test is deterministic; the
// benchmark (bench/kill_matrix_bench.cc) checks 20 seeds.
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "properties/kill_matrix.h"
#include "r3/check/verdict.h"

namespace r3::props {
namespace {

constexpr uint64_t kSeed = 20260813;  // the day #50874 was merged
constexpr int kDefaultCases = 100;    // RapidCheck's default max_success
constexpr int kSurvivorCases = 1000;

std::string TargetName(const testing::TestParamInfo<KillTarget>& info) {
  std::string name;
  for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

// RC_FAIL prefixes "file:line:"; the report's first lines say what broke:
// invariant and rank, the violation, captured vs expected.
std::string Headline(const std::string& message) {
  const size_t at = message.find("invariant ");
  if (at == std::string::npos) return message;
  size_t end = at;
  for (int line = 0; line < 4 && end != std::string::npos; ++line) {
    end = message.find('\n', end + 1);
    if (end != std::string::npos && message.compare(end + 1, 2, "  ") != 0) break;
  }
  return message.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

class KillMatrix : public testing::TestWithParam<KillTarget> {};

TEST_P(KillMatrix, CaughtWithinTheDefaultCaseCountOrSurvives) {
  const KillTarget& target = GetParam();
  const int cases = target.must_survive ? kSurvivorCases : kDefaultCases;
  std::cout << target.name << ": " << target.description << "\n";
  const PropertyRun* first = nullptr;
  std::vector<PropertyRun> runs;
  for (int i = 1; i <= check::kNumInvariants; ++i) {
    runs.push_back(RunProperty(static_cast<check::Invariant>(i), target.options, kSeed, cases,
                               /*shrink=*/true));
  }
  for (const PropertyRun& run : runs) {
    const int inv = static_cast<int>(*run.invariant);
    ASSERT_FALSE(run.error) << "invariant " << inv << ": " << run.message;
    std::cout << "  invariant " << inv << " ("
              << check::InvariantName(*run.invariant) << "): "
              << (run.failed ? "KILLED at case " + std::to_string(run.cases) + ", " +
                                   std::to_string(run.shrinks) + " shrink steps"
                             : "passed " + std::to_string(run.cases) + " cases")
              << "\n";
    if (run.failed && first == nullptr) first = &run;
  }
  if (target.must_survive) {
    EXPECT_EQ(first, nullptr) << target.name << " must survive, but invariant "
                              << static_cast<int>(*first->invariant) << " failed:\n"
                              << first->message;
    return;
  }
  ASSERT_NE(first, nullptr) << target.name << " survived " << kDefaultCases
                            << " cases of every property (seed " << kSeed << ")";
  std::cout << "  minimal counterexample (invariant " << static_cast<int>(*first->invariant)
            << "):\n"
            << first->counterexample << "  " << Headline(first->message) << "\n";
}

INSTANTIATE_TEST_SUITE_P(Targets, KillMatrix, testing::ValuesIn(KillTargets()), TargetName);

// The matrix covers the whole host catalogue: a new mutant is never silently
// left out.
TEST(KillMatrixTargets, CoverEveryHostMutantAndBothBaselines) {
  int mutants = 0;
  bool pre = false, legacy = false;
  for (const KillTarget& t : KillTargets()) {
    mutants += t.name.rfind("mutant ", 0) == 0 ? 1 : 0;
    pre |= t.options.version == sut::Version::kPre50874;
    legacy |= t.options.policy == sut::Policy::kLegacy;
  }
  int host = 0;
  for (const sut::MutantInfo& info : sut::MutantCatalogue()) host += info.gpu_only ? 0 : 1;
  EXPECT_EQ(mutants, host);
  EXPECT_TRUE(pre);
  EXPECT_TRUE(legacy);
}

}  // namespace
}  // namespace r3::props
