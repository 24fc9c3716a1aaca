// The `verify` sampler draws legal cases, deterministically, and covers the
// step shapes that matter under every dispatch path, the lone token (one DP
// rank with one token, every other DP rank idle) included.
#include "r3/sample/case_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "r3/case/case_format.h"
#include "r3/case/step_shapes.h"

namespace r3::sample {
namespace {

constexpr int kCases = 10000;

std::string DispatchPath(const Config& c) {
  const bool sp = SpEnabled(c);
  if (c.dispatch == Dispatch::kNaive) return sp ? "naive-ep-sp" : "naive-dp";
  return sp ? "internal-sp" : "internal";
}

TEST(CaseSamplerTest, CasesAreLegalAndTheSameForTheSameSeed) {
  CaseSampler a(/*seed=*/3);
  CaseSampler b(/*seed=*/3);
  for (int i = 0; i < 2000; ++i) {
    const Case c = a.Next();
    ASSERT_EQ(ValidateCase(c).field, "") << PrintCase(c);
    ASSERT_EQ(c, b.Next());
  }
}

// Each dispatch path gets lone-token cases: at least 0.5% of the sample
// (expected 1.8% for the internal paths, 5.5% for the naive ones).
TEST(CaseSamplerTest, DrawsALoneTokenUnderEveryDispatchPath) {
  CaseSampler sampler(/*seed=*/1);
  std::map<std::string, int> lone;
  for (int i = 0; i < kCases; ++i) {
    const Case c = sampler.Next();
    if (IsLoneToken(c)) ++lone[DispatchPath(c.config)];
  }
  for (const char* path : {"naive-ep-sp", "naive-dp", "internal-sp", "internal"}) {
    EXPECT_GE(lone[path], kCases / 200) << "lone token under " << path << ": " << lone[path]
                                        << " of " << kCases << " sampled cases";
  }
}

// An engine with fewer layouts (SGLang: no SP, internal dispatch at tp 1
// only, its own chunked prefill size) gets only those, and often a chunk below M, where
// SGLang's pre-#26123 buffer is short. The same seed gives the same cases.
TEST(CaseSamplerTest, ADomainGetsOnlyItsLayoutsAndItsOwnChunk) {
  const LayoutDomain sglang{.internal_dispatch = true, .internal_dispatch_tp1_only = true,
                            .sequence_parallel = false, .chunked_prefill = true,
                            .vllm_findings = false};
  CaseSampler sampler(/*seed=*/5, sglang);
  CaseSampler again(/*seed=*/5, sglang);
  int below_m = 0;
  int unset = 0;
  int internal = 0;
  for (int i = 0; i < kCases; ++i) {
    const Case c = sampler.Next();
    ASSERT_EQ(ValidateCase(c).field, "") << PrintCase(c);
    ASSERT_EQ(OutsideDomain(sglang, c, "sglang").field, "") << PrintCase(c);
    ASSERT_EQ(c, again.Next());
    if (c.config.chunked_prefill_size == 0) ++unset;
    if (c.config.dispatch == Dispatch::kInternal) ++internal;
    if (c.config.chunked_prefill_size > 0 &&
        c.config.chunked_prefill_size < c.config.max_num_batched_tokens) {
      ++below_m;
    }
  }
  EXPECT_GE(below_m, kCases / 3);
  EXPECT_GE(unset, kCases / 4);
  EXPECT_GE(internal, kCases / 50);  // tp 1 draws keep theirs: expected 1/7 * 25 %, 3.6 %
}

// The default domain draws vLLM's stream unchanged: the layouts a domain
// removes are fitted after the draw, its chunk drawn after the case, so a
// seed's vLLM cases are what they were before domains existed.
TEST(CaseSamplerTest, TheFullDomainKeepsEveryLayoutAndNoChunk) {
  CaseSampler sampler(/*seed=*/9);
  std::map<std::string, int> paths;
  for (int i = 0; i < 2000; ++i) {
    const Case c = sampler.Next();
    ASSERT_EQ(c.config.chunked_prefill_size, 0);
    ASSERT_EQ(c.config.moe_comm, MoeComm::kNone);
    ++paths[DispatchPath(c.config)];
  }
  EXPECT_EQ(paths.size(), 4u);
}

// vllm-ascend's domain: every case has a comm type, each about a third of
// the time, under naive dispatch; the same seed, the same cases.
TEST(CaseSamplerTest, TheAscendDomainDrawsEachCommType) {
  const LayoutDomain ascend{.internal_dispatch = false, .vllm_findings = false,
                            .vllm_dispatch = false, .ascend_comm = true};
  CaseSampler sampler(/*seed=*/3, ascend);
  CaseSampler again(/*seed=*/3, ascend);
  std::map<MoeComm, int> comms;
  for (int i = 0; i < kCases; ++i) {
    const Case c = sampler.Next();
    ASSERT_EQ(ValidateCase(c).field, "") << PrintCase(c);
    ASSERT_EQ(OutsideDomain(ascend, c, "vllm-ascend").field, "") << PrintCase(c);
    ASSERT_EQ(c, again.Next());
    ++comms[c.config.moe_comm];
  }
  EXPECT_EQ(comms.count(MoeComm::kNone), 0u);
  for (MoeComm comm : {MoeComm::kAllGather, MoeComm::kAllToAll, MoeComm::kMc2}) {
    EXPECT_GE(comms[comm], kCases / 4) << MoeCommName(comm);
  }
}

// A domain with vLLM's layouts (internal dispatch too) and the comm types
// draws none as well, and fits a comm type drawn on an internal case.
TEST(CaseSamplerTest, ADomainWithBothDrawsNoneAndEveryCommTypeLegally) {
  const LayoutDomain both{.ascend_comm = true};
  CaseSampler sampler(/*seed=*/4, both);
  std::map<MoeComm, int> comms;
  for (int i = 0; i < kCases; ++i) {
    const Case c = sampler.Next();
    ASSERT_EQ(ValidateCase(c).field, "") << PrintCase(c);
    ++comms[c.config.moe_comm];
  }
  for (MoeComm comm : {MoeComm::kNone, MoeComm::kAllGather, MoeComm::kAllToAll, MoeComm::kMc2}) {
    EXPECT_GE(comms[comm], kCases / 6) << MoeCommName(comm);
  }
}

}  // namespace
}  // namespace r3::sample
