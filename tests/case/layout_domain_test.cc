#include "r3/case/layout_domain.h"

#include <gtest/gtest.h>

#include "r3/case/case_format.h"

namespace r3 {
namespace {

constexpr LayoutDomain kNaiveOnly{.internal_dispatch = false, .sequence_parallel = false};
constexpr LayoutDomain kSglang{.internal_dispatch = true, .internal_dispatch_tp1_only = true,
                               .sequence_parallel = false, .chunked_prefill = true,
                               .vllm_findings = false};

Case Eager(const std::string& dispatch, const std::string& sp) {
  return ParseCase("r3case 1\ndp 2\ntp 2\nep on\ndispatch " + dispatch + "\nsp " + sp +
                       "\nmax_num_batched_tokens 8\ntop_k 2\nnum_experts 8\nnum_layers 1\ntokens 5 3\n",
                   "t");
}

TEST(LayoutDomainTest, TheFullDomainHasEveryLayout) {
  for (const char* dispatch : {"naive", "internal"}) {
    for (const char* sp : {"auto", "on", "off"}) {
      EXPECT_EQ(OutsideDomain(LayoutDomain{}, Eager(dispatch, sp), "x").field, "") << dispatch << sp;
    }
  }
}

TEST(LayoutDomainTest, InternalDispatchAndSpAreNamedWithTheFix) {
  FieldError e = OutsideDomain(kNaiveOnly, Eager("internal", "off"), "x");
  EXPECT_EQ(e.field, "dispatch");
  EXPECT_EQ(e.message, "internal: x has no such layout (its router sees the DP-gathered batch); use naive");
  e = OutsideDomain(kSglang, Eager("internal", "off"), "sglang");  // tp 2
  EXPECT_EQ(e.field, "dispatch");
  EXPECT_EQ(e.message, "internal with tp 2: sglang drives it with tp 1 only; use naive or tp 1");
  Case tp1 = Eager("internal", "off");
  tp1.config.tp = 1;
  EXPECT_EQ(OutsideDomain(kSglang, tp1, "sglang").field, "");
  EXPECT_EQ(OutsideDomain(kNaiveOnly, tp1, "x").field, "dispatch");
  e = OutsideDomain(kSglang, Eager("naive", "auto"), "sglang");  // auto: SP is on here
  EXPECT_EQ(e.field, "sp");
  EXPECT_EQ(e.message, "auto turns MoE sequence parallelism on, which sglang does not have; use sp off");
  EXPECT_EQ(OutsideDomain(kSglang, Eager("naive", "off"), "sglang").field, "");
  // sp auto where SP cannot exist (ep off) is no SP at all.
  Case no_ep = Eager("naive", "auto");
  no_ep.config.ep = false;
  EXPECT_EQ(OutsideDomain(kSglang, no_ep, "sglang").field, "");
}

TEST(LayoutDomainTest, FittingChangesOnlyWhatTheDomainLacks) {
  Case c = Eager("internal", "auto");
  FitToDomain(kSglang, c);  // tp 2
  EXPECT_EQ(c, Eager("naive", "off"));
  Case tp1 = Eager("internal", "auto");
  tp1.config.tp = 1;  // SP cannot exist: auto is off
  Case fitted = tp1;
  FitToDomain(kSglang, fitted);
  EXPECT_EQ(fitted, tp1);
  FitToDomain(kNaiveOnly, fitted);
  EXPECT_EQ(fitted.config.dispatch, Dispatch::kNaive);
  Case kept = Eager("internal", "auto");
  FitToDomain(LayoutDomain{}, kept);
  EXPECT_EQ(kept, Eager("internal", "auto"));
  Case no_ep = Eager("naive", "auto");
  no_ep.config.ep = false;
  const Case before = no_ep;
  FitToDomain(kSglang, no_ep);
  EXPECT_EQ(no_ep, before);  // auto stays auto where it means off
}

constexpr LayoutDomain kAscend{.internal_dispatch = false, .vllm_findings = false,
                               .vllm_dispatch = false, .ascend_comm = true};

TEST(LayoutDomainTest, CommTypesAreVllmAscendsAndOnlyItsLayouts) {
  Case c = Eager("naive", "auto");
  FieldError e = OutsideDomain(kAscend, c, "vllm-ascend");
  EXPECT_EQ(e.field, "moe_comm");
  EXPECT_EQ(e.message, "none (vLLM's dispatch): vllm-ascend lays rows out by its comm type; give allgather, alltoall or mc2");
  c.config.moe_comm = MoeComm::kAllToAll;
  EXPECT_EQ(OutsideDomain(kAscend, c, "vllm-ascend").field, "");  // sp auto: vLLM's SP is not used
  e = OutsideDomain(LayoutDomain{}, c, "vllm-post-50874");
  EXPECT_EQ(e.field, "moe_comm");
  EXPECT_EQ(e.message, "alltoall is vllm-ascend's layout; vllm-post-50874 runs vLLM's dispatch (moe_comm none)");
  EXPECT_EQ(OutsideDomain(kSglang, c, "sglang").field, "moe_comm");
}

TEST(LayoutDomainTest, FittingGivesTheCommTypeItsDomainNeeds) {
  Case c = Eager("internal", "on");
  FitToDomain(kAscend, c);
  EXPECT_EQ(c.config.moe_comm, MoeComm::kAllGather);
  EXPECT_EQ(c.config.dispatch, Dispatch::kNaive);
  EXPECT_EQ(c.config.sp, SpMode::kAuto);
  EXPECT_EQ(ValidateCase(c).field, "");
  EXPECT_EQ(OutsideDomain(kAscend, c, "x").field, "");
  c.config.moe_comm = MoeComm::kMc2;
  FitToDomain(kAscend, c);
  EXPECT_EQ(c.config.moe_comm, MoeComm::kMc2);  // a comm type the domain has stays
  FitToDomain(LayoutDomain{}, c);
  EXPECT_EQ(c.config.moe_comm, MoeComm::kNone);
  // A domain with both vLLM's dispatch (internal too) and the comm types:
  // a comm type still takes naive dispatch.
  Case both = Eager("internal", "auto");
  both.config.moe_comm = MoeComm::kAllToAll;
  FitToDomain({.ascend_comm = true}, both);
  EXPECT_EQ(both.config.dispatch, Dispatch::kNaive);
  EXPECT_EQ(both.config.moe_comm, MoeComm::kAllToAll);
  EXPECT_EQ(ValidateCase(both).field, "");
}

}  // namespace
}  // namespace r3
