#include "r3/case/case_format.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <vector>

#include "r3/case/case_fields.h"

namespace r3 {
namespace {

constexpr size_t kMaxInputBytes = 1 << 20;

struct Line {
  int number;
  std::vector<std::string_view> words;  // words[0] is the key
};

// The header, then the field table's keys.
bool IsKnownKey(std::string_view key) { return key == "r3case" || FindField(key) != nullptr; }

std::vector<std::string_view> SplitWords(std::string_view text) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != '\r') ++j;
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  Case Parse() {
    if (text_.size() > kMaxInputBytes) Fail(1, "r3case", "input is larger than 1 MiB");
    // A UTF-8 byte-order mark (some Windows editors write one) is no text.
    if (text_.starts_with("\xEF\xBB\xBF")) text_.remove_prefix(3);
    SplitLines();
    if (lines_.empty() || lines_.front().words[0] != "r3case") {
      Fail(lines_.empty() ? 1 : lines_.front().number, "r3case",
           "the first line must be the header 'r3case 1'");
    }
    Case c;
    const Line& header = Single("r3case");
    if (header.words.size() != 2 || header.words[1] != "1") {
      Fail(header.number, "r3case", "unsupported version (this reader knows version 1)");
    }
    // The table's order: dp comes before the per-rank lists it sizes.
    for (const CaseField& field : CaseFields()) {
      switch (field.kind) {
        case FieldKind::kInt:
          field.set(c, 0, field.optional && Find(field.name) == nullptr
                              ? field.lo
                              : Int(field.name, field.lo, field.hi));
          break;
        case FieldKind::kChoice:
          field.set(c, 0, field.optional && Find(field.name) == nullptr
                              ? field.lo
                              : Choice(field.name, field.choices));
          break;
        case FieldKind::kPerRank: {
          const bool absent = !field.defaults_to.empty() && Find(field.name) == nullptr;
          const std::vector<int64_t> values =
              absent ? FieldValues(*FindField(field.defaults_to), c)
                     : IntList(field.name, c.config.dp, field.lo, field.hi);
          for (size_t d = 0; d < values.size(); ++d) field.set(c, d, values[d]);
          break;
        }
      }
    }
    const FieldError error = ValidateCase(c);
    if (!error.field.empty()) {
      // Every field ValidateCase can name has its line: the others are
      // required keys, and an absent padded list equals tokens, so it is
      // never the one at fault.
      const Line* line = Find(error.field);
      Fail(line != nullptr ? line->number : last_line_, error.field, error.message);
    }
    return c;
  }

 private:
  [[noreturn]] void Fail(int line, std::string_view field, const std::string& message) const {
    std::ostringstream out;
    out << source_ << ":" << line << ": " << field << ": " << message;
    throw CaseFormatError(out.str());
  }

  void SplitLines() {
    int number = 0;
    size_t pos = 0;
    while (pos <= text_.size()) {
      size_t end = text_.find('\n', pos);
      if (end == std::string_view::npos) end = text_.size();
      ++number;
      std::string_view raw = text_.substr(pos, end - pos);
      if (raw.find('\0') != std::string_view::npos) Fail(number, "r3case", "NUL byte in input");
      // CRLF is read; a CR before anything but the LF is an old-Mac (CR
      // only) line ending, which would read as one long line.
      const size_t cr = raw.find('\r');
      if (cr != std::string_view::npos && cr + 1 < raw.size()) {
        Fail(number, "r3case",
             "old-Mac line endings (CR without LF); write LF or CRLF line ends, e.g. tr '\\r' '\\n'");
      }
      const size_t hash = raw.find('#');
      if (hash != std::string_view::npos) raw = raw.substr(0, hash);
      // Keys and values are ASCII; a Latin-1 byte or a pasted non-breaking
      // space would otherwise surface as an unknown key or a bad number
      // with a '?' in it. Comments may hold any bytes.
      for (size_t i = 0; i < raw.size(); ++i) {
        const auto u = static_cast<unsigned char>(raw[i]);
        if (u >= 0x80) {
          static constexpr char kHex[] = "0123456789abcdef";
          Fail(number, "r3case",
               std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15] + " at column " +
                   std::to_string(i + 1) +
                   " is not ASCII (outside '#' comments a case file holds ASCII only: keys, "
                   "numbers, on/off words)");
        }
      }
      std::vector<std::string_view> words = SplitWords(raw);
      if (!words.empty()) {
        if (!IsKnownKey(words[0])) {
          Fail(number, Printable(words[0]), "unknown key");
        }
        if (seen_.count(std::string(words[0])) != 0) {
          Fail(number, words[0],
               "duplicate key (first given on line " +
                   std::to_string(seen_[std::string(words[0])]) + ")");
        }
        seen_[std::string(words[0])] = number;
        lines_.push_back({number, std::move(words)});
      }
      if (end == text_.size()) break;
      pos = end + 1;
    }
    last_line_ = number;
  }

  // Keeps error lines printable whatever bytes the key holds.
  static std::string Printable(std::string_view word) {
    std::string out;
    for (char ch : word.substr(0, 40)) {
      const auto u = static_cast<unsigned char>(ch);
      out += (u >= 0x20 && u < 0x7f) ? ch : '?';
    }
    return out;
  }

  const Line* Find(std::string_view key) const {
    for (const Line& line : lines_) {
      if (line.words[0] == key) return &line;
    }
    return nullptr;
  }

  const Line& Single(std::string_view key) const {
    const Line* line = Find(key);
    if (line == nullptr) Fail(last_line_, key, "missing required key");
    return *line;
  }

  const Line& OneValue(std::string_view key) const {
    const Line& line = Single(key);
    if (line.words.size() != 2) {
      Fail(line.number, key,
           "expects exactly one value, got " + std::to_string(line.words.size() - 1));
    }
    return line;
  }

  int64_t ParseInt(const Line& line, std::string_view key, std::string_view word, int64_t lo,
                   int64_t hi) const {
    int64_t value = 0;
    const char* first = word.data();
    const char* last = word.data() + word.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range) {
      Fail(line.number, key, "value '" + Printable(word) + "' is out of range [" +
                                 std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    if (ec != std::errc() || ptr != last) {
      Fail(line.number, key, "'" + Printable(word) + "' is not an integer");
    }
    if (value < lo || value > hi) {
      Fail(line.number, key, "value " + std::to_string(value) + " is out of range [" +
                                 std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return value;
  }

  int64_t Int(std::string_view key, int64_t lo, int64_t hi) const {
    const Line& line = OneValue(key);
    return ParseInt(line, key, line.words[1], lo, hi);
  }

  int Choice(std::string_view key, std::span<const std::string_view> options) const {
    const Line& line = OneValue(key);
    int index = 0;
    std::string expected;
    for (std::string_view option : options) {
      if (line.words[1] == option) return index;
      expected += (index == 0 ? "" : " | ") + std::string(option);
      ++index;
    }
    Fail(line.number, key, "'" + Printable(line.words[1]) + "' is not one of " + expected);
  }

  std::vector<int64_t> IntList(std::string_view key, int64_t count, int64_t lo,
                               int64_t hi) const {
    const Line& line = Single(key);
    const int64_t got = static_cast<int64_t>(line.words.size()) - 1;
    if (got != count) {
      Fail(line.number, key,
           "expects " + std::to_string(count) + " values (one per DP rank), got " +
               std::to_string(got));
    }
    std::vector<int64_t> values;
    values.reserve(static_cast<size_t>(count));
    for (size_t i = 1; i < line.words.size(); ++i) {
      values.push_back(ParseInt(line, key, line.words[i], lo, hi));
    }
    return values;
  }

  std::string_view text_;
  std::string_view source_;
  std::vector<Line> lines_;
  std::map<std::string, int> seen_;
  int last_line_ = 1;
};


}  // namespace

Case ParseCase(std::string_view text, std::string_view source) {
  return Parser(text, source).Parse();
}

Case ReadCase(std::istream& in, const std::string& source) {
  std::string text;
  char buffer[4096];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxInputBytes) {
      throw CaseFormatError(source + ":1: r3case: input is larger than 1 MiB");
    }
  }
  return ParseCase(text, source);
}

Case LoadCaseFile(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    throw CaseFormatError(path + ":0: r3case: cannot open file" +
                          (error != 0 ? " (" + std::string(std::strerror(error)) + ")" : ""));
  }
  return ReadCase(in, path);
}

std::string PrintCase(const Case& c) {
  std::ostringstream out;
  out << "r3case 1\n";
  for (const CaseField& field : CaseFields()) {
    if (field.kind != FieldKind::kPerRank) {
      if (field.optional && field.get(c, 0) == field.lo) continue;
      out << field.name << ' ' << FieldText(field, c) << '\n';
      continue;
    }
    const std::vector<int64_t> values = FieldValues(field, c);
    // Canonical: a list equal to the one it defaults to is left out.
    if (!field.defaults_to.empty() && values == FieldValues(*FindField(field.defaults_to), c)) {
      continue;
    }
    out << field.name;
    for (int64_t v : values) out << ' ' << v;
    out << '\n';
  }
  return out.str();
}

}  // namespace r3
