// The `verify` sampler draws legal cases, deterministically, and covers the
// step shapes that matter under every dispatch path, the lone token (one DP
// rank with one token, every other DP rank idle) included.
#include "r3/sample/case_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "r3/case/case_format.h"
#include "r3/case/step_shapes.h"
#include "r3check_config.h"
#include "tests/testing/approval.h"

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

// The shape of a step, as the sampler's six step kinds make them.
std::string StepKind(const Case& c) {
  const Step& s = c.step;
  const int64_t m = c.config.max_num_batched_tokens;
  if (IsLoneToken(c)) return "lone";
  if (s.tokens == std::vector<int64_t>(s.tokens.size(), m) &&
      s.padded == std::vector<int64_t>(s.tokens.size(), m)) {
    return "warmup";
  }
  if (s.tokens == std::vector<int64_t>(s.tokens.size(), 1) &&
      s.padded == std::vector<int64_t>(s.tokens.size(), 1)) {
    return "decode";
  }
  if (s.padded != s.tokens) return "graph";  // padded to one size
  return "eager";
}

// Every draw reaches both ends of its range and every value of its table,
// at about its stated rate: a sampler that stops drawing a value (sequence
// parallelism off, a DP size, the large expert counts) narrows every
// `verify` run without any test of a single case noticing.
TEST(CaseSamplerTest, EveryDrawReachesItsWholeRange) {
  CaseSampler sampler(/*seed=*/2);
  std::set<int64_t> dp, tp, experts, top_k, layers, table_m;
  std::map<std::string, int> kinds;
  int ep = 0, naive = 0, sp_auto = 0, sp_off = 0, small_m = 0, large_experts = 0;
  int64_t small_m_lo = 1 << 30, small_m_hi = 0, experts_lo = 1 << 30, experts_hi = 0;
  const std::set<int64_t> kTableM = {8192, 2048, 4096, 1000, 24, 7};
  for (int i = 0; i < kCases; ++i) {
    const Case c = sampler.Next();
    const Config& cfg = c.config;
    dp.insert(cfg.dp);
    tp.insert(cfg.tp);
    ep += cfg.ep ? 1 : 0;
    naive += cfg.dispatch == Dispatch::kNaive ? 1 : 0;
    sp_auto += cfg.sp == SpMode::kAuto ? 1 : 0;
    sp_off += cfg.sp == SpMode::kOff ? 1 : 0;
    const int64_t m = cfg.max_num_batched_tokens;
    if (kTableM.count(m) != 0) table_m.insert(m);
    if (m <= 300 && kTableM.count(m) == 0) {
      ++small_m;
      small_m_lo = std::min(small_m_lo, m);
      small_m_hi = std::max(small_m_hi, m);
    }
    if (cfg.num_experts > 256) {
      ++large_experts;
      experts_lo = std::min(experts_lo, cfg.num_experts);
      experts_hi = std::max(experts_hi, cfg.num_experts);
    } else {
      experts.insert(cfg.num_experts);
    }
    top_k.insert(cfg.top_k);
    layers.insert(cfg.num_layers);
    ++kinds[StepKind(c)];
  }
  EXPECT_EQ(dp, (std::set<int64_t>{1, 2, 3, 4, 5, 8, 16}));
  EXPECT_EQ(tp, (std::set<int64_t>{1, 2, 3, 4, 6, 8}));
  EXPECT_EQ(table_m, kTableM);
  EXPECT_EQ(experts, (std::set<int64_t>{8, 64, 128, 256}));
  EXPECT_EQ(top_k, (std::set<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(layers, (std::set<int64_t>{1, 2, 3, 4}));
  // Rates (expected 70, 75, 85, 15, ~50, 10 %), each within a few points.
  EXPECT_NEAR(ep, kCases * 70 / 100, kCases / 25);
  EXPECT_NEAR(naive, kCases * 75 / 100, kCases / 25);
  EXPECT_NEAR(sp_auto, kCases * 85 / 100, kCases / 25);
  EXPECT_NEAR(sp_off, kCases * 15 / 100, kCases / 25);
  EXPECT_NEAR(small_m, kCases * 50 / 100, kCases / 20);
  EXPECT_NEAR(large_experts, kCases * 10 / 100, kCases / 40);
  EXPECT_EQ(small_m_lo, 1);
  EXPECT_EQ(small_m_hi, 300);
  EXPECT_GE(experts_lo, 257);
  EXPECT_LE(experts_lo, 1000);
  EXPECT_LE(experts_hi, 70000);
  EXPECT_GE(experts_hi, 60000);
  for (const char* kind : {"eager", "graph", "decode", "warmup", "lone"}) {
    EXPECT_GE(kinds[kind], kCases / 50) << kind;
  }
}

// No case asks an engine for more router scores (tokens x experts) than
// the common draws do, 2^21 (8192 tokens at 256 experts): the large expert
// counts come with few tokens, every tabled token count still comes with
// 256 experts (the clamp leaves the common draws alone), and the large
// counts still reach both the bound and far below it.
TEST(CaseSamplerTest, RouterScoresStayWithinTheCommonDraws) {
  constexpr int64_t kMaxScores = int64_t{1} << 21;
  CaseSampler sampler(/*seed=*/6);
  std::set<int64_t> m_at_256;
  int at_bound = 0, below_bound = 0;
  for (int i = 0; i < kCases; ++i) {
    const Case c = sampler.Next();
    const int64_t m = c.config.max_num_batched_tokens;
    const int64_t e = c.config.num_experts;
    ASSERT_LE(m * e, kMaxScores) << PrintCase(c);
    if (e == 256) m_at_256.insert(m);
    if (e > 256) ++(m == kMaxScores / e ? at_bound : below_bound);
  }
  for (const int64_t m : {8192, 2048, 4096, 1000, 24, 7, 1, 300}) {
    EXPECT_EQ(m_at_256.count(m), 1u) << "M " << m << " with 256 experts";
  }
  EXPECT_GE(at_bound, kCases / 50);
  EXPECT_GE(below_bound, kCases / 50);
}

// A seed's cases are the same on every machine and in every r3check version
// (a `verify --seed` in a bug report must replay): the first cases of three
// domains' streams are approved. An intended change of the sampler updates
// them with R3_UPDATE_APPROVALS=1, and says so in its commit.
TEST(CaseSamplerTest, TheStreamOfASeedIsApproved) {
  std::ostringstream out;
  const std::pair<const char*, LayoutDomain> domains[] = {
      {"vllm", LayoutDomain{}},
      {"sglang", LayoutDomain{.internal_dispatch = true, .internal_dispatch_tp1_only = true,
                              .sequence_parallel = false, .chunked_prefill = true,
                              .vllm_findings = false}},
      {"vllm-ascend", LayoutDomain{.internal_dispatch = false, .vllm_findings = false,
                                   .vllm_dispatch = false, .ascend_comm = true}},
  };
  for (const auto& [name, domain] : domains) {
    CaseSampler sampler(/*seed=*/7, domain);
    for (int i = 0; i < 24; ++i) {
      out << "# " << name << " seed 7 case " << i << "\n" << PrintCase(sampler.Next()) << "\n";
    }
  }
  // The rest of a long stream, as one digest (FNV-1a of the printed cases):
  // a rate moved by one point changes a case in a few hundred.
  for (const auto& [name, domain] : domains) {
    CaseSampler sampler(/*seed=*/7, domain);
    uint64_t digest = 14695981039346656037ull;
    for (int i = 0; i < kCases; ++i) {
      for (const char ch : PrintCase(sampler.Next())) {
        digest = (digest ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
      }
    }
    out << "# " << name << " seed 7, FNV-1a of the first " << kCases << " cases: " << std::hex
        << digest << std::dec << "\n";
  }
  testing::ExpectApproved("sampler_seed7.txt", out.str(), "the sampler's stream");
}

}  // namespace
}  // namespace r3::sample
