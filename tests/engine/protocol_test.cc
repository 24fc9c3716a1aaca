// The engine protocol: requests built from the dispatch plan, and strict
// reading of replies (every malformed field is a ProtocolError naming it).
#include "r3/engine/protocol.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "r3/engine/engine_sut.h"

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
  EXPECT_EQ(c["dispatch"], "naive");
  ASSERT_EQ(c["ranks"].size(), 4u);
  EXPECT_EQ(c["ranks"][3]["dp"], 1);
  EXPECT_EQ(c["ranks"][3]["tp"], 1);
  EXPECT_EQ(c["ranks"][3]["rows"], json::parse(R"([{"dp":0,"from":0,"count":5},{"pad":1},
                                                    {"dp":1,"from":0,"count":3},{"pad":1}])"));
}

// Fields of newer layouts are sent only when a case has them: a request
// without them is what adapters of protocol 1 were written against.
TEST(ProtocolTest, ChunkedPrefillIsSentOnlyWhenSet) {
  Case c = MakeCase({.tokens = {5, 3}});
  std::vector<sut::DispatchPlan> plans = {sut::PlanDispatch(c, {})};
  json j = json::parse(RunRequest(1, {&c, 1}, plans));
  EXPECT_FALSE(j["cases"][0].contains("chunked_prefill_size"));
  EXPECT_FALSE(j["cases"][0].contains("moe_comm"));
  c.config.chunked_prefill_size = 1;
  plans = {sut::PlanDispatch(c, {})};
  j = json::parse(RunRequest(1, {&c, 1}, plans));
  EXPECT_EQ(j["cases"][0]["chunked_prefill_size"], 1);
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

// An adapter may spell an empty stretch either way (a padding run of 0
// rows, a run of 0 rows); both are no rows, and a negative one is refused.
TEST(ProtocolTest, EmptyRunsOfEitherKindAreNoRows) {
  json r = GoodReply();
  r["cases"][0]["ranks"][2]["captured"] = json::parse(
      R"([{"pad":0},{"dp":0,"from":0,"count":0},{"pad":2},{"dp":0,"from":0,"count":5},{"pad":0}])");
  const std::vector<Case> cases = {MakeCase({.tokens = {5, 3}})};
  EXPECT_EQ(DescribeRuns(ParseRunReply(r.dump(), 3, cases)[0].ranks[2].captured),
            "pad2 dp0[0..5)");
  r["cases"][0]["ranks"][2]["captured"][2]["pad"] = -1;
  EXPECT_EQ(ErrorOf(r),
            "reply to run 3: cases[0].ranks[2].captured[2].pad: -1 is outside [0, 1125899906842624]");
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

json SizingHello() {
  return {{"type", "hello"},   {"protocol", 1},         {"engine", "vllm"},
          {"source", "/x.py"}, {"sha256", "ab"},         {"engine_version", "unknown"},
          {"interface", "i"},  {"device", "cpu"},        {"world_size", 1},
          {"backend", "none"},
          {"sizing", {{"source", "/v/modular_kernel.py"}, {"sha256", "0123abcd"},
                      {"kind", "monolithic"}, {"interface", "set_capture_fn(fn)"}}}};
}

std::string HelloErrorOf(const json& hello) {
  try {
    ParseHello(hello.dump());
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ProtocolTest, HelloSizingIsOptionalAndParsedStrictly) {
  const Hello h = ParseHello(SizingHello().dump());
  ASSERT_TRUE(h.sizing.has_value());
  EXPECT_EQ(h.sizing->source, "/v/modular_kernel.py");
  EXPECT_EQ(h.sizing->sha256, "0123abcd");
  EXPECT_EQ(h.sizing->kind, "monolithic");
  EXPECT_EQ(h.sizing->interface, "set_capture_fn(fn)");
  json hello = SizingHello();
  hello["sizing"] = nullptr;
  EXPECT_FALSE(ParseHello(hello.dump()).sizing.has_value());
  hello.erase("sizing");  // an old adapter
  EXPECT_FALSE(ParseHello(hello.dump()).sizing.has_value());
  hello = SizingHello();
  hello["sizing"] = "modular_kernel.py";
  EXPECT_EQ(HelloErrorOf(hello), "hello: sizing: expected null or an object");
  hello = SizingHello();
  hello["sizing"]["kind"] = "fused";
  EXPECT_EQ(HelloErrorOf(hello), "hello: sizing.kind: 'fused' is not monolithic | sink | device-buffer");
  hello = SizingHello();
  hello["sizing"]["source"] = "modular_kernel.py";
  EXPECT_EQ(HelloErrorOf(hello), "hello: sizing.source: 'modular_kernel.py' is not an absolute path");
  hello = SizingHello();
  hello["sizing"]["sha256"] = "XYZ";
  EXPECT_EQ(HelloErrorOf(hello), "hello: sizing.sha256: expected lowercase hex");
  hello = SizingHello();
  hello["sizing"].erase("interface");
  EXPECT_EQ(HelloErrorOf(hello), "hello: sizing.interface: missing");
  hello = SizingHello();
  hello["sizing"]["interface"] = 1;
  EXPECT_EQ(HelloErrorOf(hello), "hello: sizing.interface: expected a string");
}

json SizingReply() {
  json r = GoodReply();
  for (json& rank : r["cases"][0]["ranks"]) {
    rank["replay_rows"] = 8;
    rank["replay_error"] = nullptr;
    rank["kernel_slice_rows"] = nullptr;
  }
  return r;
}

TEST(ProtocolTest, RanksReportTheEnginesReplayBuffer) {
  const std::vector<Case> cases = {MakeCase({.tokens = {5, 3}})};
  json r = SizingReply();
  r["cases"][0]["ranks"][1]["replay_error"] = {
      {"type", "ValueError"}, {"message", "Routing replay buffer was initialized for 8 tokens"}};
  r["cases"][0]["ranks"][2]["kernel_slice_rows"] = 8;
  const std::vector<CaseReply> replies = ParseRunReply(r.dump(), 3, cases);
  const std::vector<RankReply>& ranks = replies[0].ranks;
  EXPECT_EQ(ranks[0].replay_rows, 8);
  EXPECT_FALSE(ranks[0].replay_error.has_value());
  EXPECT_FALSE(ranks[0].kernel_slice_rows.has_value());
  EXPECT_EQ(ranks[1].replay_error, "ValueError: Routing replay buffer was initialized for 8 tokens");
  EXPECT_EQ(ranks[2].kernel_slice_rows, 8);
  // An old adapter reports none of them: today's behaviour.
  const std::vector<CaseReply> old = ParseRunReply(GoodReply().dump(), 3, cases);
  EXPECT_FALSE(old[0].ranks[0].replay_rows.has_value());
  EXPECT_FALSE(old[0].ranks[0].kernel_slice_rows.has_value());
}

TEST(ProtocolTest, EveryMalformedSizingFieldIsNamed) {
  json r = SizingReply();
  r["cases"][0]["ranks"][1]["replay_rows"] = "8";
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[1].replay_rows: expected an integer >= 0");
  r["cases"][0]["ranks"][1]["replay_rows"] = -1;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[1].replay_rows: expected an integer >= 0");
  r["cases"][0]["ranks"][1]["replay_rows"] = 8.5;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[1].replay_rows: expected an integer >= 0");
  r = SizingReply();
  r["cases"][0]["ranks"][2]["kernel_slice_rows"] = true;
  EXPECT_EQ(ErrorOf(r),
            "reply to run 3: cases[0].ranks[2].kernel_slice_rows: expected an integer >= 0");
  r = SizingReply();
  r["cases"][0]["ranks"][0]["replay_error"] = "ValueError: too small";
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[0].replay_error: expected null or "
                        "{\"type\", \"message\"}");
  r["cases"][0]["ranks"][0]["replay_error"] = {{"type", "ValueError"}};
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[0].replay_error.message: missing");
  r["cases"][0]["ranks"][0]["replay_error"] = {{"type", 1}, {"message", "m"}};
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[0].replay_error.type: expected a string");
  // The others need replay_rows, and a case reports rows on all ranks or none.
  r = GoodReply();
  r["cases"][0]["ranks"][0]["replay_error"] = {{"type", "ValueError"}, {"message", "m"}};
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[0].replay_error: given without replay_rows");
  r = GoodReply();
  r["cases"][0]["ranks"][3]["kernel_slice_rows"] = 4;
  EXPECT_EQ(ErrorOf(r),
            "reply to run 3: cases[0].ranks[3].kernel_slice_rows: given without replay_rows");
  r = SizingReply();
  r["cases"][0]["ranks"][2]["replay_rows"] = nullptr;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[2].replay_rows: missing, but ranks[0] "
                        "reports its rows (a case reports them on every rank or on none)");
  r = GoodReply();
  r["cases"][0]["ranks"][1]["replay_rows"] = 8;
  EXPECT_EQ(ErrorOf(r), "reply to run 3: cases[0].ranks[1].replay_rows: reported, but ranks[0] "
                        "reports none (a case reports them on every rank or on none)");
}

// The reply an adapter may plausibly send for `request`: every rank raised
// (a long message), reports vLLM's ValueError, and captured every row it
// was sent (an engine that trims nothing).
std::string HeavyReply(const json& request) {
  const std::string message(400, 'm');
  json out = {{"type", "result"}, {"id", request["id"]}, {"cases", json::array()}};
  for (const json& c : request["cases"]) {
    json ranks = json::array();
    for (const json& rank : c["ranks"]) {
      int64_t n = 0;
      for (const json& run : rank["rows"]) n += run.contains("pad") ? run["pad"].get<int64_t>() : run["count"].get<int64_t>();
      ranks.push_back(
          {{"dp", rank["dp"]}, {"tp", rank["tp"]}, {"n", n},
           {"error", {{"type", "AssertionError"}, {"message", message}}},
           {"captured", rank["rows"]}, {"tp_gather", true}, {"stray", 1125899906842624},
           {"undecodable", 1125899906842624}, {"replay_rows", 1125899906842624},
           {"replay_error", {{"type", "ValueError"},
                             {"message", "Routing replay buffer was initialized for 1125899906842624 "
                                         "tokens on cuda:0, but the kernel received "
                                         "1125899906842624 tokens on cuda:0."}}},
           {"kernel_slice_rows", 1125899906842624}});
    }
    out["cases"].push_back(
        {{"collective", "emulated"}, {"buffer_dtype", "uint16"}, {"ranks", ranks}});
  }
  return out.dump();
}

std::string RequestFor(const std::vector<Case>& cases) {
  std::vector<sut::DispatchPlan> plans;
  for (const Case& c : cases) plans.push_back(sut::PlanDispatch(c, {}));
  return RunRequest(1, cases, plans);
}

TEST(ProtocolTest, TheReplyToTheLargestBatchFitsTheLineCap) {
  // kMaxCasesPerRequest cases of kMaxRanksPerRequest ranks in all, SP on,
  // every rank's rows several runs long.
  const int64_t per_case = kMaxRanksPerRequest / static_cast<int64_t>(kMaxCasesPerRequest);
  std::vector<Case> cases(kMaxCasesPerRequest,
                          MakeCase({.dp = 2, .tp = per_case / 2, .tokens = {8191, 8189}}));
  const std::string request = RequestFor(cases);
  const std::string reply = HeavyReply(json::parse(request));
  std::printf("largest batch: request %zu bytes, heavy reply %zu bytes, cap %zu\n", request.size(),
              reply.size(), ReplyLineCap(request.size()));
  EXPECT_LT(reply.size(), ReplyLineCap(request.size()));
  EXPECT_LT(reply.size(), kMaxLineBytes * 3 / 4) << "less than a quarter of the cap is left";
  EXPECT_EQ(ReplyLineCap(request.size()), kMaxLineBytes);
  // A batch of single-rank cases: the most rank entries per request.
  cases.assign(kMaxCasesPerRequest, MakeCase({.dp = 1, .tp = 1, .tokens = {8192}}));
  EXPECT_LT(HeavyReply(json::parse(RequestFor(cases))).size(), kMaxLineBytes / 4);
}

TEST(ProtocolTest, TheReplyToTheLargestCaseFitsTheLineCap) {
  // One case of kMaxEngineRanks ranks goes alone; under naive SP every rank
  // is sent the whole gathered batch, 2 * D runs: its request is larger than
  // the 4 MiB floor, and the cap grows with it.
  const int64_t dp = 64;
  const int64_t tp = kMaxEngineRanks / dp;
  std::vector<int64_t> tokens(dp, kMaxEngineRowsPerRank / dp - 1);
  const std::vector<Case> cases = {
      MakeCase({.dp = dp, .tp = tp, .max_num_batched_tokens = kMaxEngineRowsPerRank / dp,
                .tokens = tokens})};
  const std::string request = RequestFor(cases);
  const std::string reply = HeavyReply(json::parse(request));
  std::printf("largest case: request %zu bytes, heavy reply %zu bytes, cap %zu\n", request.size(),
              reply.size(), ReplyLineCap(request.size()));
  EXPECT_GT(request.size(), kMaxLineBytes);
  EXPECT_LT(reply.size(), ReplyLineCap(request.size()));
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

TEST(ProtocolTest, HelloSaysHowTheDeviceWasMapped) {
  json hello = SizingHello();
  EXPECT_EQ(ParseHello(hello.dump()).device_map, "");  // absent: nothing mapped
  hello["device_map"] = nullptr;
  EXPECT_EQ(ParseHello(hello.dump()).device_map, "");
  hello["device_map"] = "cuda -> cpu";
  EXPECT_EQ(ParseHello(hello.dump()).device_map, "cuda -> cpu");
  hello["device_map"] = 1;
  EXPECT_NE(HelloErrorOf(hello).find("device_map"), std::string::npos) << HelloErrorOf(hello);
}

TEST(ProtocolTest, HelloSaysWhichDtypesStoodIn) {
  json hello = SizingHello();
  EXPECT_EQ(ParseHello(hello.dump()).dtype_map, "");  // absent: a torch with every dtype
  hello["dtype_map"] = "uint16 -> int32";
  EXPECT_EQ(ParseHello(hello.dump()).dtype_map, "uint16 -> int32");
  hello["dtype_map"] = false;
  EXPECT_NE(HelloErrorOf(hello).find("dtype_map"), std::string::npos) << HelloErrorOf(hello);
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
