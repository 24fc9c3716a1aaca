// The engine protocol: requests built from the dispatch plan, and strict
// reading of replies (every malformed field is a ProtocolError naming it).
#include "r3/engine/protocol.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/testing/test_case.h"

namespace r3::engine {
namespace {

using nlohmann::json;
using ::r3::testing::MakeCase;

TEST(ProtocolTest, RunRequestCarriesEachRanksRowsAndTheForwardContext) {
  const Case eager = MakeCase({.tokens = {5, 3}});
  const std::vector<Case> cases = {eager};
  const std::vector<sut::DispatchPlan> plans = {sut::PlanDispatch(eager, {})};
  const json j = json::parse(RunRequest(/*id=*/7, cases, plans));
  EXPECT_EQ(j["type"], "run");
  EXPECT_EQ(j["id"], 7);
  const json& c = j["cases"][0];
  EXPECT_EQ(c["num_tokens_across_dp"], json({5, 3}));
  EXPECT_EQ(c["local_sizes"], json({3, 3, 2, 2}));
  EXPECT_EQ(c["sp"], true);
  ASSERT_EQ(c["ranks"].size(), 4u);
  EXPECT_EQ(c["ranks"][3]["dp"], 1);
  EXPECT_EQ(c["ranks"][3]["tp"], 1);
  EXPECT_EQ(c["ranks"][3]["rows"], json::parse(R"([{"dp":0,"from":0,"count":5},{"pad":1},
                                                    {"dp":1,"from":0,"count":3},{"pad":1}])"));
}

TEST(ProtocolTest, LocalSizesAreNullWithOneDpRank) {
  const Case single = MakeCase({.dp = 1, .tokens = {4}});
  const std::vector<Case> cases = {single};
  const std::vector<sut::DispatchPlan> plans = {sut::PlanDispatch(single, {})};
  const json j = json::parse(RunRequest(1, cases, plans));
  EXPECT_TRUE(j["cases"][0]["local_sizes"].is_null());
}

json GoodReply() {
  json rank = {{"dp", 0},        {"tp", 0},     {"n", 10},        {"error", nullptr},
               {"captured", json::parse(R"([{"dp":0,"from":0,"count":5}])")},
               {"tp_gather", false}, {"stray", 0}, {"undecodable", 0}};
  json ranks = json::array();
  for (int r = 0; r < 4; ++r) {
    rank["dp"] = r / 2;
    rank["tp"] = r % 2;
    ranks.push_back(rank);
  }
  return {{"type", "result"},
          {"id", 3},
          {"cases", json::array({{{"collective", "emulated"}, {"buffer_dtype", "int32"},
                                   {"ranks", ranks}}})}};
}

std::string ErrorOf(const json& reply) {
  const std::vector<Case> cases = {MakeCase({.tokens = {5, 3}})};
  try {
    ParseRunReply(reply.dump(), 3, cases);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ProtocolTest, AGoodReplyParses) {
  const std::vector<Case> cases = {MakeCase({.tokens = {5, 3}})};
  const std::vector<CaseReply> replies = ParseRunReply(GoodReply().dump(), 3, cases);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].buffer_dtype, "int32");
  EXPECT_EQ(DescribeRuns(replies[0].ranks[2].captured), "dp0[0..5)");
  EXPECT_FALSE(replies[0].ranks[2].error.has_value());
}

TEST(ProtocolTest, ANullBufferDtypeMeansNoCapturerWasBuilt) {
  json r = GoodReply();
  r["cases"][0]["buffer_dtype"] = nullptr;
  const std::vector<Case> cases = {MakeCase({.tokens = {5, 3}})};
  EXPECT_EQ(ParseRunReply(r.dump(), 3, cases)[0].buffer_dtype, "");
  r["cases"][0]["buffer_dtype"] = 16;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].buffer_dtype: expected a string");
}

TEST(ProtocolTest, EveryMalformedFieldIsNamed) {
  json r = GoodReply();
  r["id"] = 4;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: id: 4 is outside [3, 3]");
  r = GoodReply();
  r["cases"].push_back(r["cases"][0]);
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases: 2 entries, expected 1");
  r = GoodReply();
  r["cases"][0]["ranks"].erase(3);
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks: 3 entries, expected 4");
  r = GoodReply();
  r["cases"][0]["ranks"][1]["captured"][0]["dp"] = 2;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[1].captured[0].dp: 2 is outside [0, 1]");
  r = GoodReply();
  r["cases"][0]["ranks"][1]["captured"][0]["count"] = 6;
  EXPECT_EQ(ErrorOf(r),
            "reply to run 3: cases[0].ranks[1].captured[0].count: 6 is outside [0, 5]");
  r = GoodReply();
  r["cases"][0]["ranks"][2]["tp_gather"] = "yes";
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[2].tp_gather: expected true or false");
  r = GoodReply();
  r["cases"][0]["ranks"][0].erase("stray");
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[0].stray: missing");
  r = GoodReply();
  r["cases"][0]["ranks"][0]["error"] = {{"type", "AssertionError"}};
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[0].error.message: missing");
  r = GoodReply();
  r["cases"][0]["collective"] = "maybe";
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].collective: 'maybe' is not emulated | real");
  r = GoodReply();
  r["cases"][0]["ranks"][3]["tp"] = 0;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[3].tp: 0 is outside [1, 1]");
}

TEST(ProtocolTest, FatalAndNonJsonRepliesAreErrors) {
  const std::vector<Case> cases = {MakeCase({.tokens = {5, 3}})};
  EXPECT_THROW(ParseRunReply("Traceback (most recent call last):", 3, cases), ProtocolError);
  try {
    ParseRunReply(R"({"type":"fatal","error":"no RoutedExpertsCapturer in x.py"})", 3, cases);
    ADD_FAILURE() << "a fatal message was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(), "no RoutedExpertsCapturer in x.py");
  }
  EXPECT_THROW(ParseRunReply(R"({"type":"hello","protocol":1})", 3, cases), ProtocolError);
}

TEST(ProtocolTest, HelloChecksTheProtocolVersion) {
  json hello = {{"type", "hello"},     {"protocol", 1},        {"engine", "vllm"},
                {"source", "/x.py"},   {"sha256", "ab"},        {"engine_version", "unknown"},
                {"interface", "i"},    {"device", "cpu"},       {"world_size", 1},
                {"backend", "none"}};
  EXPECT_EQ(ParseHello(hello.dump()).source, "/x.py");
  hello["protocol"] = 2;
  try {
    ParseHello(hello.dump());
    ADD_FAILURE() << "protocol 2 was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(), "speaks protocol 2, r3check speaks 1");
  }
}

}  // namespace
}  // namespace r3::engine
