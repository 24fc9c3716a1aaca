// The case domain's field table: every field of a case once, with its key in
// the case format, its range (the case limits), how to read and write it,
// and where shrinking ends. The case format (keys, parse order, canonical
// print), ValidateCase's ranges, the minimizer's candidates and field
// report, the RapidCheck generators (properties/case_domain_gen.h) and the
// fuzz mutator's repair (case_shape.h) all read it, so a new field is one
// row here.
//
// Flags and enums are choices: the value is the index of the spelling, and
// index 0 is the simplest (EP off, naive dispatch, SP auto).
#ifndef R3_CASE_CASE_FIELDS_H_
#define R3_CASE_CASE_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "r3/case/case.h"

namespace r3 {

// In the case format's key order (which is also the parse order).
enum class FieldId {
  kDp,
  kTp,
  kEp,
  kDispatch,
  kSp,
  kMaxNumBatchedTokens,
  kTopK,
  kNumExperts,
  kNumLayers,
  kTokens,
  kPadded,
  kChunkedPrefillSize,
  kMoeComm,
};
inline constexpr size_t kFieldCount = 13;

enum class FieldKind {
  kInt,      // one integer
  kChoice,   // one of `choices`; the value is its index
  kPerRank,  // one integer per DP rank (`rank` selects it)
};

struct CaseField {
  FieldId id;
  std::string_view name;  // the key in the case format
  FieldKind kind;
  int64_t lo;  // the range every case keeps to (choices: 0 .. count - 1)
  int64_t hi;
  std::span<const std::string_view> choices;  // kChoice: spellings by value
  // kPerRank: the field whose values stand in when the key is absent, and
  // whose equal values make printing leave it out (`padded`: `tokens`).
  std::string_view defaults_to;
  // The minimizer's field report tries value - 1 and value + 1, and with
  // this also twice the value.
  bool probe_double;
  // How many values `c` holds: 1, or per rank the length of its list.
  size_t (*count)(const Case& c);
  int64_t (*get)(const Case& c, size_t rank);  // a scalar ignores `rank`
  // Setting dp resizes the step: ranks past the new count go, new ranks
  // copy the last one (zero tokens when there is none).
  void (*set)(Case& c, size_t rank, int64_t value);
  // Order between fields: this field's value is at least `below`'s and at
  // most `above`'s (the same rank's, for two per-rank fields). top_k <=
  // num_experts, tokens <= M, tokens <= padded <= M. ValidateCase checks
  // them (with a message each); shrinking and clamping read them here.
  std::optional<FieldId> below;
  std::optional<FieldId> above;
  // An optional scalar: an absent key reads as `lo`, and a value of `lo` is
  // left out when printed (in the case format and in JSON), so cases that
  // do not use it read and print as before it existed. An optional choice
  // selects another engine's layouts: CaseShape() leaves it at `lo`.
  bool optional = false;
};

// Every field, indexed by FieldId.
std::span<const CaseField> CaseFields();
const CaseField& Field(FieldId id);
// The field with this key, or nullptr.
const CaseField* FindField(std::string_view name);

// The fields in an order where every `below` and `above` comes before the
// field that names it (num_experts before top_k, M before the counts): the
// order to draw or clamp a case in, each field within what the ones before
// it allow.
std::span<const FieldId> FieldsInDependencyOrder();

// The value as the case format prints it ("on", "naive", "8192").
std::string FieldText(const CaseField& field, const Case& c, size_t rank = 0);

// Every value of the field in `c` (one, or one per rank).
std::vector<int64_t> FieldValues(const CaseField& field, const Case& c);

// Values from `lo` up to (not including) `v`, smallest first: lo, then
// v - (v-lo)/2, v - (v-lo)/4, ..., v - 1. Accepting the first that still
// fails and starting over is a binary search when the failure is monotone.
// Short ranges (at most 16 values) come whole: failures are not monotone in
// the counts (3 rows over TP 2 leave SP padding, 2 rows do not).
std::vector<int64_t> ShrinkLadder(int64_t lo, int64_t v);

struct FieldRange {
  int64_t lo;
  int64_t hi;
};

// The field's limits narrowed by its own `below`/`above` in `c`: what is
// left for it once the fields before it in dependency order are set.
FieldRange DependentBounds(const CaseField& field, const Case& c, size_t rank = 0);

// The values the field may take in `c` with every other field as it is:
// its limits, narrowed by its own `below`/`above` and by the fields that
// name it (M >= every padded count, num_experts >= top_k).
FieldRange BoundsIn(const CaseField& field, const Case& c, size_t rank = 0);

// The field's ladder in `c`: from the lowest value BoundsIn allows up to
// its current value.
std::vector<int64_t> ShrinkLadder(const CaseField& field, const Case& c, size_t rank = 0);

}  // namespace r3

#endif  // R3_CASE_CASE_FIELDS_H_
