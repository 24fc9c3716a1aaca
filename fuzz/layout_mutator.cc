// LLVMFuzzerCustomMutator for the layout target: parse, edit like a person
// (case_mutator.h), print back. Unparsable input goes to libFuzzer's own byte
// mutation most of the time, and is sometimes replaced by a fresh small case
// so that a run from an empty corpus reaches valid cases quickly.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz/case_mutator.h"
#include "r3/case/case_format.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// The last case this mutator emitted, and its text. libFuzzer mutates its
// own output again (up to -mutate_depth times per corpus pick), so most
// inputs are that text: the case is taken back without a second parse.
// PrintCase round-trips (case_mutator_test), so it is the case the text
// parses to; the target still parses every input itself.
struct Emitted {
  std::string text;
  r3::Case c;
};

Emitted& Last() {
  static Emitted last;
  return last;
}

size_t Emit(const r3::Case& c, uint8_t* data, size_t max_size) {
  std::string text = r3::PrintCase(c);
  if (text.size() > max_size) return 0;
  std::memcpy(data, text.data(), text.size());
  Last() = {std::move(text), c};
  return Last().text.size();
}

bool IsLastEmitted(const uint8_t* data, size_t size) {
  const std::string& text = Last().text;
  return !text.empty() && size == text.size() && std::memcmp(data, text.data(), size) == 0;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  r3::fuzz::Rng rng(seed);
  r3::Case c;
  bool parsed = true;
  if (IsLastEmitted(data, size)) {
    c = Last().c;
  } else {
    try {
      c = r3::ParseCase(std::string_view(reinterpret_cast<const char*>(data), size), "<mutator>");
    } catch (const r3::CaseFormatError&) {
      parsed = false;
    }
  }
  // Now and then a byte-level edit of a valid case too: it reaches the
  // parser's corners (comments, spacing, bad values) that printing never does.
  if (parsed && !rng.OneIn(16) && r3::fuzz::MutateCase(c, rng)) {
    if (const size_t n = Emit(c, data, max_size); n != 0) return n;
  }
  if (!parsed && rng.OneIn(4)) {
    r3::Case fresh = r3::fuzz::RandomCase(rng);
    r3::fuzz::MutateCase(fresh, rng);
    if (const size_t n = Emit(fresh, data, max_size); n != 0) return n;
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
