// Builders for the cases the unit tests use, spelled like the spec's
// examples: TP2/DP2 with EP and SP, M = 8192, K = 8.
#ifndef R3_TESTS_TESTING_TEST_CASE_H_
#define R3_TESTS_TESTING_TEST_CASE_H_

#include <vector>

#include "r3/case/case.h"

namespace r3::testing {

struct CaseSpec {
  int64_t dp = 2;
  int64_t tp = 2;
  bool ep = true;
  Dispatch dispatch = Dispatch::kNaive;
  SpMode sp = SpMode::kAuto;
  int64_t max_num_batched_tokens = 8192;
  std::vector<int64_t> tokens;
  std::vector<int64_t> padded;  // empty: same as tokens
  int64_t num_experts = 256;
};

inline Case MakeCase(const CaseSpec& spec) {
  Case c;
  c.config.dp = spec.dp;
  c.config.tp = spec.tp;
  c.config.ep = spec.ep;
  c.config.dispatch = spec.dispatch;
  c.config.sp = spec.sp;
  c.config.max_num_batched_tokens = spec.max_num_batched_tokens;
  c.config.top_k = 8;
  c.config.num_experts = spec.num_experts;
  c.config.num_layers = 1;
  c.step.tokens = spec.tokens;
  c.step.padded = spec.padded.empty() ? spec.tokens : spec.padded;
  return c;
}

}  // namespace r3::testing

#endif  // R3_TESTS_TESTING_TEST_CASE_H_
