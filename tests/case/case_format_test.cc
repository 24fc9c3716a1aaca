#include "r3/case/case_format.h"

#include <gtest/gtest.h>

#include <string>

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
                 "t.r3case:2: r3case: NUL byte in input"}),
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

}  // namespace
}  // namespace r3
