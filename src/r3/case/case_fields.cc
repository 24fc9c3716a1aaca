#include "r3/case/case_fields.h"

#include <algorithm>
#include <array>

#include "r3/case/limits.h"

namespace r3 {
namespace {

constexpr std::array<std::string_view, 2> kOnOff = {"off", "on"};
constexpr std::array<std::string_view, 2> kDispatchNames = {"naive", "internal"};
constexpr std::array<std::string_view, 3> kSpNames = {"auto", "on", "off"};
constexpr std::array<std::string_view, 4> kMoeCommNames = {"none", "allgather", "alltoall", "mc2"};

size_t One(const Case&) { return 1; }

void Resize(Case& c, int64_t dp) {
  const auto n = static_cast<size_t>(std::max<int64_t>(dp, 0));
  std::vector<int64_t>& tokens = c.step.tokens;
  std::vector<int64_t>& padded = c.step.padded;
  const int64_t last_t = tokens.empty() ? 0 : tokens.back();
  const int64_t last_n = padded.empty() ? 0 : padded.back();
  tokens.resize(n, last_t);
  padded.resize(n, last_n);
  c.config.dp = dp;
}

// A config integer in [1, hi], bound by no other field.
template <int64_t Config::*kMember, int64_t kHi>
constexpr CaseField IntField(FieldId id, std::string_view name, bool probe_double) {
  return {id,
          name,
          FieldKind::kInt,
          1,
          kHi,
          {},
          {},
          probe_double,
          One,
          [](const Case& c, size_t) { return c.config.*kMember; },
          [](Case& c, size_t, int64_t v) { c.config.*kMember = v; },
          {},
          {}};
}

template <size_t kN>
constexpr int64_t LastChoice(const std::array<std::string_view, kN>&) {
  return static_cast<int64_t>(kN) - 1;
}

constexpr std::array<CaseField, kFieldCount> kFields = {{
    {FieldId::kDp, "dp", FieldKind::kInt, 1, kMaxDp, {}, {}, false, One,
     [](const Case& c, size_t) { return c.config.dp; },
     [](Case& c, size_t, int64_t v) { Resize(c, v); }, {}, {}},
    IntField<&Config::tp, kMaxTp>(FieldId::kTp, "tp", true),
    {FieldId::kEp, "ep", FieldKind::kChoice, 0, LastChoice(kOnOff), kOnOff, {}, false, One,
     [](const Case& c, size_t) { return int64_t{c.config.ep ? 1 : 0}; },
     [](Case& c, size_t, int64_t v) { c.config.ep = v != 0; }, {}, {}},
    {FieldId::kDispatch, "dispatch", FieldKind::kChoice, 0, LastChoice(kDispatchNames),
     kDispatchNames, {}, false, One,
     [](const Case& c, size_t) { return static_cast<int64_t>(c.config.dispatch); },
     [](Case& c, size_t, int64_t v) { c.config.dispatch = static_cast<Dispatch>(v); }, {}, {}},
    {FieldId::kSp, "sp", FieldKind::kChoice, 0, LastChoice(kSpNames), kSpNames, {}, false, One,
     [](const Case& c, size_t) { return static_cast<int64_t>(c.config.sp); },
     [](Case& c, size_t, int64_t v) { c.config.sp = static_cast<SpMode>(v); }, {}, {}},
    {FieldId::kMaxNumBatchedTokens, "max_num_batched_tokens", FieldKind::kInt, 1,
     kMaxBatchedTokens, {}, {}, true, One,
     [](const Case& c, size_t) { return c.config.max_num_batched_tokens; },
     [](Case& c, size_t, int64_t v) { c.config.max_num_batched_tokens = v; }, {}, {}},
    {FieldId::kTopK, "top_k", FieldKind::kInt, 1, kMaxTopK, {}, {}, false, One,
     [](const Case& c, size_t) { return c.config.top_k; },
     [](Case& c, size_t, int64_t v) { c.config.top_k = v; }, {}, FieldId::kNumExperts},
    {FieldId::kNumExperts, "num_experts", FieldKind::kInt, 1, kMaxExperts, {}, {}, true, One,
     [](const Case& c, size_t) { return c.config.num_experts; },
     [](Case& c, size_t, int64_t v) { c.config.num_experts = v; }, {}, {}},
    IntField<&Config::num_layers, kMaxLayers>(FieldId::kNumLayers, "num_layers", false),
    {FieldId::kTokens, "tokens", FieldKind::kPerRank, 0, kMaxBatchedTokens, {}, {}, false,
     [](const Case& c) { return c.step.tokens.size(); },
     [](const Case& c, size_t d) { return c.step.tokens[d]; },
     [](Case& c, size_t d, int64_t v) { c.step.tokens[d] = v; }, {},
     FieldId::kMaxNumBatchedTokens},
    {FieldId::kPadded, "padded", FieldKind::kPerRank, 0, kMaxBatchedTokens, {}, "tokens", false,
     [](const Case& c) { return c.step.padded.size(); },
     [](const Case& c, size_t d) { return c.step.padded[d]; },
     [](Case& c, size_t d, int64_t v) { c.step.padded[d] = v; }, FieldId::kTokens,
     FieldId::kMaxNumBatchedTokens},
    {FieldId::kChunkedPrefillSize, "chunked_prefill_size", FieldKind::kInt, 0, kMaxBatchedTokens,
     {}, {}, false, One,
     [](const Case& c, size_t) { return c.config.chunked_prefill_size; },
     [](Case& c, size_t, int64_t v) { c.config.chunked_prefill_size = v; }, {},
     FieldId::kMaxNumBatchedTokens, /*optional=*/true},
    {FieldId::kMoeComm, "moe_comm", FieldKind::kChoice, 0, LastChoice(kMoeCommNames),
     kMoeCommNames, {}, false, One,
     [](const Case& c, size_t) { return static_cast<int64_t>(c.config.moe_comm); },
     [](Case& c, size_t, int64_t v) { c.config.moe_comm = static_cast<MoeComm>(v); }, {}, {},
     /*optional=*/true},
}};

// Every `below`/`above` before the field naming it; SP after ep, tp and dp,
// whose values its rule reads.
constexpr std::array<FieldId, kFieldCount> kDependencyOrder = {
    FieldId::kDp,         FieldId::kTp,   FieldId::kEp,        FieldId::kDispatch,
    FieldId::kSp,         FieldId::kNumExperts, FieldId::kTopK, FieldId::kNumLayers,
    FieldId::kMaxNumBatchedTokens, FieldId::kTokens, FieldId::kPadded,
    FieldId::kChunkedPrefillSize, FieldId::kMoeComm};

}  // namespace

std::span<const CaseField> CaseFields() { return kFields; }

const CaseField& Field(FieldId id) { return kFields[static_cast<size_t>(id)]; }

const CaseField* FindField(std::string_view name) {
  for (const CaseField& field : kFields) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

std::span<const FieldId> FieldsInDependencyOrder() { return kDependencyOrder; }

std::string FieldText(const CaseField& field, const Case& c, size_t rank) {
  const int64_t v = field.get(c, rank);
  if (field.kind == FieldKind::kChoice) return std::string(field.choices[static_cast<size_t>(v)]);
  return std::to_string(v);
}

std::vector<int64_t> FieldValues(const CaseField& field, const Case& c) {
  std::vector<int64_t> values;
  for (size_t i = 0, n = field.count(c); i < n; ++i) values.push_back(field.get(c, i));
  return values;
}

std::vector<int64_t> ShrinkLadder(int64_t lo, int64_t v) {
  std::vector<int64_t> out;
  if (v - lo <= 16) {  // v <= lo too: no value below v
    for (int64_t x = lo; x < v; ++x) out.push_back(x);
    return out;
  }
  for (int64_t delta = v - lo; delta > 0; delta /= 2) {
    const int64_t x = v - delta;
    if (out.empty() || out.back() != x) out.push_back(x);
  }
  return out;
}

FieldRange DependentBounds(const CaseField& field, const Case& c, size_t rank) {
  // A scalar's getter ignores the rank: the same rank's value, or the one.
  FieldRange r{field.lo, field.hi};
  if (field.below) r.lo = std::max(r.lo, Field(*field.below).get(c, rank));
  if (field.above) r.hi = std::min(r.hi, Field(*field.above).get(c, rank));
  return r;
}

FieldRange BoundsIn(const CaseField& field, const Case& c, size_t rank) {
  FieldRange r = DependentBounds(field, c, rank);
  for (const CaseField& other : kFields) {  // the fields that name this one
    const bool each_rank = other.kind == FieldKind::kPerRank && field.kind != FieldKind::kPerRank;
    const size_t first = each_rank ? 0 : rank;
    const size_t last = each_rank ? other.count(c) : rank + 1;
    for (size_t i = first; i < last; ++i) {
      if (other.above == field.id) r.lo = std::max(r.lo, other.get(c, i));
      if (other.below == field.id) r.hi = std::min(r.hi, other.get(c, i));
    }
  }
  return r;
}

std::vector<int64_t> ShrinkLadder(const CaseField& field, const Case& c, size_t rank) {
  return ShrinkLadder(BoundsIn(field, c, rank).lo, field.get(c, rank));
}

}  // namespace r3
