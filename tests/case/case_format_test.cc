#include "r3/case/case_format.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "r3/case/limits.h"

namespace r3 {
namespace {

constexpr char kEager[] = R"(# spec 7 eager step
r3case 1
dp 2
tp 2
ep on          # EP group of 4
dispatch naive
sp auto
max_num_batched_tokens 8192
top_k 8
num_experts 256
num_layers 1
tokens 5 3
)";

// The error message for `text`, or "" when it parses.
std::string ErrorOf(const std::string& text) {
  try {
    ParseCase(text, "t.r3case");
  } catch (const CaseFormatError& e) {
    return e.what();
  }
  return "";
}

// kEager with one line replaced (matched by its key) or removed.
std::string WithLine(const std::string& key, const std::string& replacement) {
  std::string out;
  size_t pos = 0;
  const std::string text = kEager;
  while (pos < text.size()) {
    const size_t end = text.find('\n', pos);
    const std::string line = text.substr(pos, end - pos);
    if (line.rfind(key + " ", 0) == 0) {
      if (!replacement.empty()) out += replacement + "\n";
    } else {
      out += line + "\n";
    }
    pos = end + 1;
  }
  return out;
}

TEST(CaseFormatTest, ParsesTheSpecExample) {
  const Case c = ParseCase(kEager, "t");
  EXPECT_EQ(c.config.dp, 2);
  EXPECT_EQ(c.config.tp, 2);
  EXPECT_TRUE(c.config.ep);
  EXPECT_EQ(c.config.dispatch, Dispatch::kNaive);
  EXPECT_EQ(c.config.sp, SpMode::kAuto);
  EXPECT_EQ(c.config.max_num_batched_tokens, 8192);
  EXPECT_EQ(c.config.top_k, 8);
  EXPECT_EQ(c.config.num_experts, 256);
  EXPECT_EQ(c.step.tokens, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{5, 3}));  // defaults to tokens
}

TEST(CaseFormatTest, KeysMayComeInAnyOrderAfterTheHeader) {
  const Case c = ParseCase(
      "r3case 1\ntokens 4\ntp 1\ndp 1\nnum_layers 2\nnum_experts 8\ntop_k 2\n"
      "max_num_batched_tokens 8\nsp off\ndispatch internal\nep off\npadded 8\n",
      "t");
  EXPECT_EQ(c.step.padded, (std::vector<int64_t>{8}));
  EXPECT_EQ(c.config.dispatch, Dispatch::kInternal);
  EXPECT_EQ(c.config.sp, SpMode::kOff);
}

TEST(CaseFormatTest, PrintIsCanonicalAndRoundTrips) {
  const Case c = ParseCase(kEager, "t");
  const std::string printed = PrintCase(c);
  EXPECT_EQ(printed,
            "r3case 1\ndp 2\ntp 2\nep on\ndispatch naive\nsp auto\nmax_num_batched_tokens 8192\n"
            "top_k 8\nnum_experts 256\nnum_layers 1\ntokens 5 3\n");
  EXPECT_EQ(ParseCase(printed, "t"), c);
  Case padded = c;
  padded.step.padded = {8, 8};
  EXPECT_NE(PrintCase(padded).find("padded 8 8\n"), std::string::npos);
  EXPECT_EQ(ParseCase(PrintCase(padded), "t"), padded);
}

struct BadInput {
  std::string name;
  std::string text;
  std::string error;
};

class CaseFormatErrorTest : public testing::TestWithParam<BadInput> {};

TEST_P(CaseFormatErrorTest, OneLineNamingFileLineAndField) {
  const std::string error = ErrorOf(GetParam().text);
  EXPECT_EQ(error, GetParam().error);
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, CaseFormatErrorTest,
    testing::Values(
        BadInput{"UnknownKey", WithLine("top_k", "topk 8"), "t.r3case:9: topk: unknown key"},
        BadInput{"MissingKey", WithLine("top_k", ""), "t.r3case:12: top_k: missing required key"},
        BadInput{"DuplicateKey", std::string(kEager) + "dp 2\n",
                 "t.r3case:13: dp: duplicate key (first given on line 3)"},
        BadInput{"NoHeader", "dp 1\n", "t.r3case:1: r3case: the first line must be the header 'r3case 1'"},
        BadInput{"Version", std::string("r3case 2\n") + (kEager + 29),
                 "t.r3case:1: r3case: unsupported version (this reader knows version 1)"},
        BadInput{"WrongCount", WithLine("tokens", "tokens 5 3 1"),
                 "t.r3case:12: tokens: expects 2 values (one per DP rank), got 3"},
        BadInput{"TwoValues", WithLine("tp", "tp 2 2"),
                 "t.r3case:4: tp: expects exactly one value, got 2"},
        BadInput{"NotAnInteger", WithLine("dp", "dp two"), "t.r3case:3: dp: 'two' is not an integer"},
        BadInput{"Negative", WithLine("tokens", "tokens -5 3"),
                 "t.r3case:12: tokens: value -5 is out of range [0, 1048576]"},
        BadInput{"Overflow", WithLine("dp", "dp 99999999999999999999999"),
                 "t.r3case:3: dp: value '99999999999999999999999' is out of range [1, 1024]"},
        BadInput{"DpTooLarge", WithLine("dp", "dp 1025"),
                 "t.r3case:3: dp: value 1025 is out of range [1, 1024]"},
        BadInput{"TpTooLarge", WithLine("tp", "tp 65"),
                 "t.r3case:4: tp: value 65 is out of range [1, 64]"},
        BadInput{"MTooLarge", WithLine("max_num_batched_tokens", "max_num_batched_tokens 1048577"),
                 "t.r3case:8: max_num_batched_tokens: value 1048577 is out of range [1, 1048576]"},
        BadInput{"TopKAtItsLimit", WithLine("top_k", "top_k 256"), ""},
        BadInput{"TopKTooLarge", WithLine("top_k", "top_k 257"),
                 "t.r3case:9: top_k: value 257 is out of range [1, 256]"},
        BadInput{"ExpertsAtTheirLimit", WithLine("num_experts", "num_experts 1048576"), ""},
        BadInput{"ExpertsTooLarge", WithLine("num_experts", "num_experts 1048577"),
                 "t.r3case:10: num_experts: value 1048577 is out of range [1, 1048576]"},
        BadInput{"LayersAtTheirLimit", WithLine("num_layers", "num_layers 4096"), ""},
        BadInput{"LayersTooLarge", WithLine("num_layers", "num_layers 4097"),
                 "t.r3case:11: num_layers: value 4097 is out of range [1, 4096]"},
        BadInput{"BadChoice", WithLine("ep", "ep yes"), "t.r3case:5: ep: 'yes' is not one of off | on"},
        BadInput{"TokensAboveM", WithLine("max_num_batched_tokens", "max_num_batched_tokens 4"),
                 "t.r3case:12: tokens: value 0 (5) exceeds max_num_batched_tokens 4"},
        BadInput{"PaddedBelowTokens", std::string(kEager) + "padded 4 3\n",
                 "t.r3case:13: padded: value 0 (4) is below tokens (5)"},
        BadInput{"TopKAboveExperts", WithLine("num_experts", "num_experts 4"),
                 "t.r3case:9: top_k: must not exceed num_experts"},
        BadInput{"EpOffWithSpAutoIsFine", WithLine("ep", "ep off"), ""},
        BadInput{"SpForcedOnIllegal",
                 WithLine("sp", "sp on").replace(WithLine("sp", "sp on").find("ep on"), 5, "ep off"),
                 "t.r3case:7: sp: on needs ep on, tp > 1 and dp > 1"},
        BadInput{"Empty", "", "t.r3case:1: r3case: the first line must be the header 'r3case 1'"},
        BadInput{"NulByte", std::string("r3case 1\n\0dp 1\n", 15),
                 "t.r3case:2: r3case: NUL byte in input"},
        BadInput{"Latin1Byte", WithLine("dp", "dp 2\xe9"),
                 "t.r3case:3: r3case: byte 0xe9 at column 5 is not ASCII (outside '#' comments a "
                 "case file holds ASCII only: keys, numbers, on/off words)"},
        BadInput{"NonBreakingSpace", WithLine("tp", "tp\xc2\xa0" "2"),
                 "t.r3case:4: r3case: byte 0xc2 at column 3 is not ASCII (outside '#' comments a "
                 "case file holds ASCII only: keys, numbers, on/off words)"},
        BadInput{"AnyBytesInAComment", WithLine("dp", "dp 2  # caf\xe9, \xc2\xa0"), ""}),
    [](const testing::TestParamInfo<BadInput>& info) { return info.param.name; });

TEST(CaseFormatTest, MissingFileIsAFormatError) {
  EXPECT_THROW(LoadCaseFile("/nonexistent/x.r3case"), CaseFormatError);
}

TEST(CaseFormatTest, LimitsAreAccepted) {
  Case c;
  c.config.dp = kMaxDp;
  c.config.tp = kMaxTp;
  c.config.ep = true;
  c.config.max_num_batched_tokens = kMaxBatchedTokens;
  c.config.top_k = kMaxTopK;
  c.config.num_experts = kMaxExperts;
  c.config.num_layers = kMaxLayers;
  c.step.tokens.assign(kMaxDp, kMaxBatchedTokens);
  c.step.padded = c.step.tokens;
  EXPECT_EQ(ParseCase(PrintCase(c), "t"), c);
}

// ValidateCase on its own: the parser range-checks first, but the sampler,
// the shrinker and the engines build cases in memory and rely on this.
Case ValidBase() {
  Case c;
  c.config.dp = 2;
  c.config.tp = 2;
  c.config.ep = true;
  c.config.max_num_batched_tokens = 8;
  c.config.top_k = 1;
  c.config.num_experts = kMaxExperts;
  c.config.num_layers = 1;
  c.step.tokens = {1, 0};  // valid for every M >= 1
  c.step.padded = {1, 0};
  return c;
}

// "field: message", or "" when the case is valid.
std::string Validate(const Case& c) {
  const FieldError error = ValidateCase(c);
  if (error.field.empty()) return "";
  return error.field + ": " + error.message;
}

struct Bound {
  std::string field;
  int64_t Config::*member;
  int64_t hi;
};

TEST(ValidateCaseTest, EveryRangeIsInclusiveAndNamedInTheError) {
  const Bound bounds[] = {
      {"dp", &Config::dp, kMaxDp},
      {"tp", &Config::tp, kMaxTp},
      {"max_num_batched_tokens", &Config::max_num_batched_tokens, kMaxBatchedTokens},
      {"top_k", &Config::top_k, kMaxTopK},
      {"num_experts", &Config::num_experts, kMaxExperts},
      {"num_layers", &Config::num_layers, kMaxLayers},
  };
  for (const Bound& b : bounds) {
    SCOPED_TRACE(b.field);
    const std::string range = b.field + ": must be in [1, " + std::to_string(b.hi) + "]";
    for (int64_t ok : {int64_t{1}, b.hi}) {
      Case c = ValidBase();
      c.config.*b.member = ok;
      if (b.field == "dp") {  // one tokens value per DP rank
        c.step.tokens.assign(static_cast<size_t>(ok), 1);
        c.step.padded = c.step.tokens;
      }
      EXPECT_EQ(Validate(c), "") << ok;
    }
    for (int64_t bad : {int64_t{0}, int64_t{-1}, b.hi + 1}) {
      Case c = ValidBase();
      c.config.*b.member = bad;
      EXPECT_EQ(Validate(c), range) << bad;
    }
  }
}

TEST(ValidateCaseTest, TopKMayEqualButNotExceedNumExperts) {
  Case c = ValidBase();
  c.config.num_experts = 4;
  c.config.top_k = 4;
  EXPECT_EQ(Validate(c), "");
  c.config.top_k = 5;
  EXPECT_EQ(Validate(c), "top_k: must not exceed num_experts");
}

TEST(ValidateCaseTest, SpForcedOnNeedsEpAndTpAndDpAboveOne) {
  Case c = ValidBase();
  c.config.sp = SpMode::kOn;
  EXPECT_EQ(Validate(c), "");  // ep on, tp 2, dp 2
  const std::string error = "sp: on needs ep on, tp > 1 and dp > 1";
  Case no_ep = c;
  no_ep.config.ep = false;
  EXPECT_EQ(Validate(no_ep), error);
  Case tp1 = c;
  tp1.config.tp = 1;
  EXPECT_EQ(Validate(tp1), error);
  Case dp1 = c;
  dp1.config.dp = 1;
  dp1.step.tokens = {1};
  dp1.step.padded = {1};
  EXPECT_EQ(Validate(dp1), error);
  for (SpMode mode : {SpMode::kAuto, SpMode::kOff}) {  // only "on" is checked
    tp1.config.sp = mode;
    EXPECT_EQ(Validate(tp1), "");
  }
}

TEST(ValidateCaseTest, StepValuesStayWithinZeroTokensPaddedAndM) {
  Case c = ValidBase();
  c.step.tokens = {0, 8};
  c.step.padded = {8, 8};
  EXPECT_EQ(Validate(c), "");  // 0 <= tokens <= padded <= M, all at their bounds
  Case negative = c;
  negative.step.tokens = {0, -1};
  negative.step.padded = {0, -1};  // padded >= tokens: only the sign is wrong
  EXPECT_EQ(Validate(negative), "tokens: value 1 is negative");
  Case above = c;
  above.step.tokens = {0, 9};
  above.step.padded = {0, 9};
  EXPECT_EQ(Validate(above), "tokens: value 1 (9) exceeds max_num_batched_tokens 8");
  Case below = c;
  below.step.padded = {8, 7};
  EXPECT_EQ(Validate(below), "padded: value 1 (7) is below tokens (8)");
  Case padded_above = c;
  padded_above.step.padded = {9, 8};
  EXPECT_EQ(Validate(padded_above), "padded: value 0 (9) exceeds max_num_batched_tokens 8");
  Case short_tokens = c;
  short_tokens.step.tokens = {0};
  EXPECT_EQ(Validate(short_tokens), "tokens: needs 2 values (one per DP rank), got 1");
  Case long_padded = c;
  long_padded.step.padded = {8, 8, 8};
  EXPECT_EQ(Validate(long_padded), "padded: needs 2 values (one per DP rank), got 3");
}

// An r3case text of exactly `size` bytes: kEager padded with a comment line.
std::string EagerOfSize(size_t size) {
  std::string text = kEager;
  text += '#';
  text.append(size - text.size(), 'x');
  return text;
}

TEST(CaseFormatTest, InputOfExactlyOneMebibyteIsAcceptedOneMoreByteIsNot) {
  constexpr size_t kMiB = size_t{1} << 20;
  EXPECT_EQ(ErrorOf(EagerOfSize(kMiB)), "");
  EXPECT_EQ(ErrorOf(EagerOfSize(kMiB + 1)), "t.r3case:1: r3case: input is larger than 1 MiB");
  std::istringstream exact(EagerOfSize(kMiB));
  EXPECT_EQ(ReadCase(exact, "<stdin>"), ParseCase(kEager, "t"));
  std::istringstream over(EagerOfSize(kMiB + 1));
  try {
    ReadCase(over, "<stdin>");
    ADD_FAILURE() << "accepted more than 1 MiB";
  } catch (const CaseFormatError& e) {
    EXPECT_STREQ(e.what(), "<stdin>:1: r3case: input is larger than 1 MiB");
  }
}

TEST(CaseFormatTest, ReadCaseStopsAtTheFirstFourKibChunkPastTheLimit) {
  // An endless stream must not be read to its end: reading goes in 4 KiB
  // chunks and stops at the first one that crosses 1 MiB.
  std::istringstream in(std::string(size_t{3} << 20, 'x'));
  EXPECT_THROW(ReadCase(in, "<stdin>"), CaseFormatError);
  in.clear();
  EXPECT_EQ(static_cast<int64_t>(in.tellg()), (int64_t{1} << 20) + 4096);
}

TEST(CaseFormatTest, UnknownKeysAreQuotedPrintableAndCutAtFortyBytes) {
  const std::string forty(40, 'k');
  EXPECT_EQ(ErrorOf("r3case 1\n" + forty + "z\n"), "t.r3case:2: " + forty + ": unknown key");
  EXPECT_EQ(ErrorOf("r3case 1\n" + forty.substr(1) + "z\n"),
            "t.r3case:2: " + forty.substr(1) + "z: unknown key");
  // Printable ASCII is 0x20..0x7e; control bytes become '?' (a byte past
  // 0x7f is refused before, with its value).
  EXPECT_EQ(ErrorOf("r3case 1\n!a~\x1f\x7f\x01z\n"), "t.r3case:2: !a~???z: unknown key");
  EXPECT_EQ(ErrorOf("r3case 1\n!a~\x1f\x7f\x80\xff\x01z\n"),
            "t.r3case:2: r3case: byte 0x80 at column 6 is not ASCII (outside '#' comments a case "
            "file holds ASCII only: keys, numbers, on/off words)");
}

}  // namespace
}  // namespace r3
