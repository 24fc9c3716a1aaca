// The field table is the one list of a case's fields: every row is a key of
// the case format and a line of PrintCase, its getter and setter agree, its
// ladder moves toward the simplest value, and the SP rule and the limits
// come from the case layer alone.
#include "r3/case/case_fields.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "r3/case/case_format.h"
#include "r3/case/case_json.h"
#include "r3/case/case_shape.h"
#include "r3/case/limits.h"

namespace r3 {
namespace {

// Every field away from its simplest value, and padded != tokens.
Case Busy() {
  return ParseCase(
      "r3case 1\ndp 3\ntp 4\nep on\ndispatch internal\nsp on\nmax_num_batched_tokens 40\n"
      "top_k 6\nnum_experts 300\nnum_layers 7\ntokens 5 0 9\npadded 8 3 9\n"
      "chunked_prefill_size 6\n",
      "busy");
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(CaseFieldsTest, TheTableIsIndexedByIdInTheFormatsKeyOrder) {
  ASSERT_EQ(CaseFields().size(), kFieldCount);
  // Busy() sets every field but moe_comm (the last), which its internal
  // dispatch cannot take: unset, it is not printed.
  const std::vector<std::string> lines = Lines(PrintCase(Busy()));
  ASSERT_EQ(lines.size(), kFieldCount);
  EXPECT_EQ(lines[0], "r3case 1");
  ASSERT_EQ(CaseFields().back().id, FieldId::kMoeComm);
  for (size_t i = 0; i < kFieldCount; ++i) {
    const CaseField& field = CaseFields()[i];
    EXPECT_EQ(static_cast<size_t>(field.id), i);
    EXPECT_EQ(&Field(field.id), &field);
    EXPECT_EQ(FindField(field.name), &field);
    // PrintCase prints each field on its own line, in table order.
    if (i + 1 < lines.size()) {
      EXPECT_EQ(lines[i + 1].substr(0, field.name.size() + 1), std::string(field.name) + " ");
    }
  }
  EXPECT_EQ(FindField("r3case"), nullptr);
  EXPECT_EQ(FindField("nope"), nullptr);
}

TEST(CaseFieldsTest, EveryFieldIsAKeyThatTheFormatRequiresOrDefaults) {
  const std::string text = PrintCase(Busy());
  for (const CaseField& field : CaseFields()) {
    SCOPED_TRACE(field.name);
    std::string without;
    for (const std::string& line : Lines(text)) {
      if (line.rfind(std::string(field.name) + " ", 0) != 0) without += line + "\n";
    }
    if (!field.defaults_to.empty()) {  // padded: absent means its tokens
      const Case c = ParseCase(without, "t");
      EXPECT_EQ(FieldValues(field, c), FieldValues(*FindField(field.defaults_to), c));
      continue;
    }
    if (field.optional) {  // chunked_prefill_size: absent means unset, and prints as absent
      const Case c = ParseCase(without, "t");
      EXPECT_EQ(field.get(c, 0), field.lo);
      EXPECT_EQ(PrintCase(c), without);
      continue;
    }
    try {
      ParseCase(without, "t");
      ADD_FAILURE() << "parsed without " << field.name;
    } catch (const CaseFormatError& e) {
      EXPECT_NE(std::string(e.what()).find(": " + std::string(field.name) + ": missing required key"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(CaseFieldsTest, FieldTextIsWhatPrintCaseWrites) {
  const Case c = Busy();
  const std::vector<std::string> lines = Lines(PrintCase(c));
  for (const CaseField& field : CaseFields()) {
    if (field.id == FieldId::kMoeComm) continue;  // unset in Busy(): not printed
    std::string expected = std::string(field.name);
    for (size_t i = 0; i < field.count(c); ++i) expected += " " + FieldText(field, c, i);
    EXPECT_EQ(lines[static_cast<size_t>(field.id) + 1], expected);
  }
  EXPECT_EQ(FieldText(Field(FieldId::kEp), c), "on");
  EXPECT_EQ(FieldText(Field(FieldId::kDispatch), c), "internal");
  EXPECT_EQ(FieldText(Field(FieldId::kSp), c), "on");
  EXPECT_EQ(FieldText(Field(FieldId::kPadded), c, 1), "3");
  EXPECT_EQ(FieldText(Field(FieldId::kPadded), c), "8");  // rank 0 unless named
}

// The rank defaults to 0 everywhere a per-rank field may be asked about.
TEST(CaseFieldsTest, TheRankDefaultsToRankZero) {
  const Case c = Busy();  // tokens 5 0 9, padded 8 3 9
  const CaseField& padded = Field(FieldId::kPadded);
  EXPECT_EQ(DependentBounds(padded, c).lo, 5);
  EXPECT_EQ(BoundsIn(padded, c).lo, 5);
  EXPECT_EQ(ShrinkLadder(padded, c), (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(FieldText(Field(FieldId::kTokens), c), "5");
}

TEST(CaseFieldsTest, SetThenGetGivesTheValueBackAtBothEndsOfEveryRange) {
  for (const CaseField& field : CaseFields()) {
    SCOPED_TRACE(field.name);
    for (int64_t v : {field.lo, field.hi, (field.lo + field.hi) / 2}) {
      Case c = Busy();
      const size_t rank = field.kind == FieldKind::kPerRank ? 2 : 0;
      field.set(c, rank, v);
      EXPECT_EQ(field.get(c, rank), v);
      if (field.id == FieldId::kDp) continue;  // it sizes the step (below)
      for (const CaseField& other : CaseFields()) {  // nothing else moved
        for (size_t i = 0; i < other.count(c); ++i) {
          if (&other == &field && i == rank) continue;
          EXPECT_EQ(other.get(c, i), other.get(Busy(), i)) << other.name << "[" << i << "]";
        }
      }
    }
  }
}

TEST(CaseFieldsTest, TheChoicesAreTheFormatsSpellingsSimplestFirst) {
  Case c = Busy();
  for (FieldId id : {FieldId::kEp, FieldId::kDispatch, FieldId::kSp}) {
    const CaseField& field = Field(id);
    EXPECT_EQ(field.kind, FieldKind::kChoice);
    EXPECT_EQ(field.lo, 0);
    EXPECT_EQ(field.hi, static_cast<int64_t>(field.choices.size()) - 1);
  }
  EXPECT_EQ(Field(FieldId::kEp).choices.size(), 2u);
  EXPECT_EQ(Field(FieldId::kDispatch).choices.size(), 2u);
  EXPECT_EQ(Field(FieldId::kSp).choices.size(), 3u);
  EXPECT_EQ(Field(FieldId::kSp).hi, 2);
  // Each value means the enum value of the same index.
  for (int64_t v : {0, 1}) {
    Field(FieldId::kEp).set(c, 0, v);
    Field(FieldId::kDispatch).set(c, 0, v);
    EXPECT_EQ(c.config.ep, v == 1);
    EXPECT_EQ(c.config.dispatch, v == 0 ? Dispatch::kNaive : Dispatch::kInternal);
  }
  for (SpMode mode : {SpMode::kAuto, SpMode::kOn, SpMode::kOff}) {
    Field(FieldId::kSp).set(c, 0, static_cast<int64_t>(mode));
    EXPECT_EQ(c.config.sp, mode);
    EXPECT_EQ(Field(FieldId::kSp).choices[static_cast<size_t>(mode)], SpModeName(mode));
  }
  EXPECT_EQ(DispatchName(Dispatch::kNaive), "naive");
  EXPECT_EQ(DispatchName(Dispatch::kInternal), "internal");
  EXPECT_EQ(SpModeName(SpMode::kAuto), "auto");
  EXPECT_EQ(SpModeName(SpMode::kOn), "on");
  EXPECT_EQ(SpModeName(SpMode::kOff), "off");
}

TEST(CaseFieldsTest, SettingDpKeepsAPrefixOrCopiesTheLastRank) {
  Case c = Busy();
  Field(FieldId::kDp).set(c, 0, 5);
  EXPECT_EQ(c.step.tokens, (std::vector<int64_t>{5, 0, 9, 9, 9}));
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{8, 3, 9, 9, 9}));
  Field(FieldId::kDp).set(c, 0, 2);
  EXPECT_EQ(c.config.dp, 2);
  EXPECT_EQ(c.step.tokens, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{8, 3}));
  Case empty;
  empty.step = {};
  Field(FieldId::kDp).set(empty, 0, 2);  // no rank to copy: idle ranks
  EXPECT_EQ(empty.step.tokens, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(empty.step.padded, (std::vector<int64_t>{0, 0}));
  for (int64_t none : {0, -3}) {  // no ranks at all, whatever dp says
    Case n = Busy();
    Field(FieldId::kDp).set(n, 0, none);
    EXPECT_EQ(n.config.dp, none);
    EXPECT_TRUE(n.step.tokens.empty());
    EXPECT_TRUE(n.step.padded.empty());
  }
  EXPECT_EQ(Field(FieldId::kDp).count(c), 1u);
  EXPECT_EQ(Field(FieldId::kTokens).count(c), 2u);
}

TEST(CaseFieldsTest, TheRangesAreTheCaseLimits) {
  struct Want {
    FieldId id;
    int64_t lo;
    int64_t hi;
  };
  for (const Want& w : {Want{FieldId::kDp, 1, kMaxDp}, Want{FieldId::kTp, 1, kMaxTp},
                        Want{FieldId::kMaxNumBatchedTokens, 1, kMaxBatchedTokens},
                        Want{FieldId::kTopK, 1, kMaxTopK}, Want{FieldId::kNumExperts, 1, kMaxExperts},
                        Want{FieldId::kNumLayers, 1, kMaxLayers},
                        Want{FieldId::kTokens, 0, kMaxBatchedTokens},
                        Want{FieldId::kPadded, 0, kMaxBatchedTokens}}) {
    EXPECT_EQ(Field(w.id).lo, w.lo) << Field(w.id).name;
    EXPECT_EQ(Field(w.id).hi, w.hi) << Field(w.id).name;
  }
  EXPECT_TRUE(Field(FieldId::kTp).probe_double);
  EXPECT_TRUE(Field(FieldId::kMaxNumBatchedTokens).probe_double);
  EXPECT_TRUE(Field(FieldId::kNumExperts).probe_double);
  EXPECT_FALSE(Field(FieldId::kDp).probe_double);
  EXPECT_FALSE(Field(FieldId::kTopK).probe_double);
  EXPECT_FALSE(Field(FieldId::kNumLayers).probe_double);
}

TEST(CaseFieldsTest, TheDependencyOrderPutsEveryBoundBeforeTheFieldItBinds) {
  const std::span<const FieldId> order = FieldsInDependencyOrder();
  ASSERT_EQ(order.size(), kFieldCount);
  EXPECT_EQ(std::set<FieldId>(order.begin(), order.end()).size(), kFieldCount);
  auto position = [&order](FieldId id) { return std::find(order.begin(), order.end(), id); };
  for (const CaseField& field : CaseFields()) {
    if (field.below) {
      EXPECT_LT(position(*field.below), position(field.id)) << field.name;
    }
    if (field.above) {
      EXPECT_LT(position(*field.above), position(field.id)) << field.name;
    }
  }
  // SP's rule reads dp, tp and ep: they come first.
  for (FieldId id : {FieldId::kDp, FieldId::kTp, FieldId::kEp}) {
    EXPECT_LT(position(id), position(FieldId::kSp));
  }
  EXPECT_EQ(Field(FieldId::kTopK).above, FieldId::kNumExperts);
  EXPECT_EQ(Field(FieldId::kTokens).above, FieldId::kMaxNumBatchedTokens);
  EXPECT_EQ(Field(FieldId::kPadded).below, FieldId::kTokens);
  EXPECT_EQ(Field(FieldId::kPadded).above, FieldId::kMaxNumBatchedTokens);
}

TEST(CaseFieldsTest, BoundsInNarrowsEachFieldByTheOthers) {
  const Case c = Busy();  // M 40, top_k 6, experts 300, tokens 5 0 9, padded 8 3 9
  auto bounds = [&c](FieldId id, size_t rank = 0) {
    const FieldRange r = BoundsIn(Field(id), c, rank);
    return std::pair{r.lo, r.hi};
  };
  EXPECT_EQ(bounds(FieldId::kMaxNumBatchedTokens), (std::pair<int64_t, int64_t>{9, kMaxBatchedTokens}));
  EXPECT_EQ(bounds(FieldId::kNumExperts), (std::pair<int64_t, int64_t>{6, kMaxExperts}));
  EXPECT_EQ(bounds(FieldId::kTopK), (std::pair<int64_t, int64_t>{1, 256}));
  EXPECT_EQ(bounds(FieldId::kTokens, 0), (std::pair<int64_t, int64_t>{0, 8}));
  EXPECT_EQ(bounds(FieldId::kPadded, 1), (std::pair<int64_t, int64_t>{0, 40}));
  EXPECT_EQ(bounds(FieldId::kPadded, 0), (std::pair<int64_t, int64_t>{5, 40}));
  EXPECT_EQ(bounds(FieldId::kDp), (std::pair<int64_t, int64_t>{1, kMaxDp}));
  Case first = c;  // the largest count on rank 0 counts too
  first.step.padded[0] = 30;
  EXPECT_EQ(BoundsIn(Field(FieldId::kMaxNumBatchedTokens), first).lo, 30);
  first.step.tokens[0] = 35;  // (an invalid case: tokens above padded)
  EXPECT_EQ(BoundsIn(Field(FieldId::kMaxNumBatchedTokens), first).lo, 35);
  EXPECT_EQ(BoundsIn(Field(FieldId::kPadded), first, 0).lo, 35);
  Case few = c;
  few.config.num_experts = 7;
  EXPECT_EQ(BoundsIn(Field(FieldId::kTopK), few).hi, 7);
  // Only the field's own below/above: what is left in dependency order.
  const FieldRange m = DependentBounds(Field(FieldId::kMaxNumBatchedTokens), c);
  EXPECT_EQ(m.lo, 1);
  const FieldRange p = DependentBounds(Field(FieldId::kPadded), c, 0);
  EXPECT_EQ(p.lo, 5);
  EXPECT_EQ(p.hi, 40);
  const FieldRange t = DependentBounds(Field(FieldId::kTokens), c, 2);
  EXPECT_EQ(t.lo, 0);
  EXPECT_EQ(t.hi, 40);
}

TEST(CaseFieldsTest, LaddersStartAtTheLowEndAndClimbTowardTheValue) {
  EXPECT_EQ(ShrinkLadder(1, 1), (std::vector<int64_t>{}));
  EXPECT_EQ(ShrinkLadder(3, 2), (std::vector<int64_t>{}));
  EXPECT_EQ(ShrinkLadder(0, 4), (std::vector<int64_t>{0, 1, 2, 3}));
  std::vector<int64_t> sixteen;
  for (int64_t x = 1; x <= 16; ++x) sixteen.push_back(x);
  EXPECT_EQ(ShrinkLadder(1, 17), sixteen);  // 16 values: whole
  EXPECT_EQ(ShrinkLadder(0, 17), (std::vector<int64_t>{0, 9, 13, 15, 16}));  // halving
  EXPECT_EQ(ShrinkLadder(1, 64), (std::vector<int64_t>{1, 33, 49, 57, 61, 63}));
  for (int64_t v : {18, 100, 1000, 1 << 20}) {
    const std::vector<int64_t> ladder = ShrinkLadder(1, v);
    EXPECT_EQ(ladder.front(), 1);
    EXPECT_EQ(ladder.back(), v - 1);
    EXPECT_TRUE(std::is_sorted(ladder.begin(), ladder.end()));
    EXPECT_EQ(std::adjacent_find(ladder.begin(), ladder.end()), ladder.end());
  }
}

TEST(CaseFieldsTest, EachFieldsLadderEndsAtItsSimplestLegalValue) {
  const Case c = Busy();
  for (const CaseField& field : CaseFields()) {
    for (size_t i = 0; i < field.count(c); ++i) {
      const std::vector<int64_t> ladder = ShrinkLadder(field, c, i);
      const int64_t v = field.get(c, i);
      const int64_t lo = BoundsIn(field, c, i).lo;
      if (v == lo) {
        EXPECT_TRUE(ladder.empty()) << field.name;
        continue;
      }
      ASSERT_FALSE(ladder.empty()) << field.name;
      EXPECT_EQ(ladder.front(), lo) << field.name;
      EXPECT_LT(ladder.back(), v) << field.name;
      for (int64_t x : ladder) {  // every rung is a valid case
        Case n = c;
        field.set(n, i, x);
        if (field.id == FieldId::kSp || field.id == FieldId::kDp || field.id == FieldId::kTp ||
            field.id == FieldId::kEp) {
          continue;  // sp on needs them: the minimizer skips those rungs
        }
        EXPECT_EQ(ValidateCase(n).field, "") << field.name << " " << x;
      }
    }
  }
  EXPECT_EQ(ShrinkLadder(Field(FieldId::kEp), c), (std::vector<int64_t>{0}));        // off
  EXPECT_EQ(ShrinkLadder(Field(FieldId::kDispatch), c), (std::vector<int64_t>{0}));  // naive
  EXPECT_EQ(ShrinkLadder(Field(FieldId::kMaxNumBatchedTokens), c).front(), 9);  // largest padded
  EXPECT_EQ(ShrinkLadder(Field(FieldId::kNumExperts), c).front(), 6);           // top_k
  EXPECT_EQ(ShrinkLadder(Field(FieldId::kPadded), c, 0), (std::vector<int64_t>{5, 6, 7}));
}

// The SP rule is the case layer's: ValidateCase takes `sp on` exactly where
// SpPossible holds, and SpEnabled is SpPossible unless SP is switched off.
TEST(CaseFieldsTest, TheSpRuleIsOneFunctionThatValidationFollows) {
  for (int64_t dp : {1, 2, 3}) {
    for (int64_t tp : {1, 2, 4}) {
      for (bool ep : {false, true}) {
        Case c = Busy();
        Field(FieldId::kDp).set(c, 0, dp);
        c.config.tp = tp;
        c.config.ep = ep;
        const bool possible = ep && tp > 1 && dp > 1;
        EXPECT_EQ(SpPossible(c.config), possible);
        for (SpMode mode : {SpMode::kAuto, SpMode::kOn, SpMode::kOff}) {
          c.config.sp = mode;
          EXPECT_EQ(SpEnabled(c.config), possible && mode != SpMode::kOff);
          const bool valid = ValidateCase(c).field.empty();
          EXPECT_EQ(valid, mode != SpMode::kOn || possible) << dp << " " << tp << " " << ep;
        }
      }
    }
  }
}

TEST(CaseFieldsTest, ValidationNamesEachOutOfRangeFieldOfTheTable) {
  for (const CaseField& field : CaseFields()) {
    if (field.kind != FieldKind::kInt || field.id == FieldId::kDp) continue;
    for (int64_t bad : {field.lo - 1, field.hi + 1}) {
      Case c = Busy();
      field.set(c, 0, bad);
      const FieldError e = ValidateCase(c);
      EXPECT_EQ(e.field, field.name);
      EXPECT_EQ(e.message, "must be in [" + std::to_string(field.lo) + ", " +
                               std::to_string(field.hi) + "]");
    }
  }
}

TEST(CaseFieldsTest, JsonCarriesEveryFieldInTableOrder) {
  const Case c = Busy();
  const nlohmann::ordered_json j = CaseToJson(c);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  std::vector<std::string> names;
  for (const CaseField& field : CaseFields()) {
    if (field.id != FieldId::kMoeComm) names.emplace_back(field.name);  // unset here: absent
  }
  EXPECT_EQ(keys, names);
  EXPECT_EQ(j["ep"], true);
  EXPECT_EQ(j["dispatch"], "internal");
  EXPECT_EQ(j["sp"], "on");
  EXPECT_EQ(j["tp"], 4);
  EXPECT_EQ(j["padded"], (std::vector<int64_t>{8, 3, 9}));
  Case eager = c;
  eager.step.padded = eager.step.tokens;
  eager.config.ep = false;
  EXPECT_EQ(CaseToJson(eager)["padded"], (std::vector<int64_t>{5, 0, 9}));  // explicit in JSON
  EXPECT_EQ(CaseToJson(eager)["ep"], false);
  EXPECT_EQ(j["chunked_prefill_size"], 6);
  Case unset = c;
  unset.config.chunked_prefill_size = 0;
  EXPECT_FALSE(CaseToJson(unset).contains("chunked_prefill_size"));  // as before the field existed
}

TEST(CaseFieldsTest, AChunkLargerThanTheStepBudgetIsRefusedNamingTheField) {
  Case c = Busy();  // M 40
  c.config.chunked_prefill_size = 40;
  EXPECT_EQ(ValidateCase(c).field, "");
  c.config.chunked_prefill_size = 41;
  EXPECT_EQ(ValidateCase(c).field, "chunked_prefill_size");
  EXPECT_EQ(ValidateCase(c).message, "must not exceed max_num_batched_tokens (40)");
  std::string text = PrintCase(c);
  try {
    ParseCase(text, "t.r3case");
    ADD_FAILURE() << "parsed a chunk above M";
  } catch (const CaseFormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.r3case:13: chunked_prefill_size: must not exceed max_num_batched_tokens (40)");
  }
}

// vllm-ascend's comm type: absent reads and prints as none (every other
// engine's case is as it was); set, it is printed, in JSON, and needs vLLM's
// naive dispatch without forced SP, which it replaces.
TEST(CaseFieldsTest, TheCommTypeIsOptionalAndReplacesVllmsDispatch) {
  const std::string text =
      "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8\n"
      "top_k 2\nnum_experts 8\nnum_layers 1\ntokens 5 3\n";
  Case c = ParseCase(text, "t");
  EXPECT_EQ(c.config.moe_comm, MoeComm::kNone);
  EXPECT_EQ(PrintCase(c), text);
  EXPECT_FALSE(CaseToJson(c).contains("moe_comm"));
  for (const char* comm : {"allgather", "alltoall", "mc2"}) {
    const Case set = ParseCase(text + "moe_comm " + comm + "\n", "t");
    EXPECT_EQ(MoeCommName(set.config.moe_comm), comm);
    EXPECT_EQ(PrintCase(set), text + "moe_comm " + comm + "\n");
    EXPECT_EQ(CaseToJson(set)["moe_comm"], comm);
    EXPECT_EQ(ValidateCase(set).field, "");
  }
  c.config.moe_comm = MoeComm::kMc2;
  c.config.dispatch = Dispatch::kInternal;
  EXPECT_EQ(ValidateCase(c).field, "moe_comm");
  EXPECT_EQ(ValidateCase(c).message, "mc2 replaces vLLM's dispatch: it needs dispatch naive");
  c.config.dispatch = Dispatch::kNaive;
  c.config.sp = SpMode::kOn;
  EXPECT_EQ(ValidateCase(c).field, "moe_comm");
  EXPECT_EQ(ValidateCase(c).message, "mc2 shards by its own rule, not vLLM's SP: it cannot take sp on");
  try {
    ParseCase(text + "moe_comm hccl\n", "t.r3case");
    ADD_FAILURE() << "parsed an unknown comm type";
  } catch (const CaseFormatError& e) {
    EXPECT_EQ(std::string(e.what()), "t.r3case:12: moe_comm: 'hccl' is not one of none | allgather | alltoall | mc2");
  }
}

// Generated cases (RapidCheck's, the fuzz mutator's) are vLLM's: the
// default shape leaves an optional choice at its first value.
TEST(CaseFieldsTest, TheDefaultShapeLeavesTheCommTypeUnset) {
  const FieldRange r = CaseShape().Range(FieldId::kMoeComm);
  EXPECT_EQ(r.lo, 0);
  EXPECT_EQ(r.hi, 0);
  const FieldRange chunk = CaseShape().Range(FieldId::kChunkedPrefillSize);
  EXPECT_EQ(chunk.hi, Field(FieldId::kChunkedPrefillSize).hi);  // an optional integer is drawn
}

}  // namespace
}  // namespace r3
