#include "r3/engine/protocol.h"

#include <nlohmann/json.hpp>

#include "r3/case/rows_json.h"

namespace r3::engine {
namespace {

using nlohmann::json;

// "reply to run 3:" + "id" -> "reply to run 3: id"; "cases[0]" + "n" -> "cases[0].n".
std::string Join(const std::string& path, const char* key) {
  return path + (path.ends_with(':') ? " " : ".") + key;
}

// Strict accessors: each failure names the field's path in the reply.
const json& Field(const json& obj, const std::string& path, const char* key) {
  if (!obj.is_object()) throw ProtocolError(path + ": expected an object");
  const auto it = obj.find(key);
  if (it == obj.end()) throw ProtocolError(Join(path, key) + ": missing");
  return *it;
}

int64_t Int(const json& obj, const std::string& path, const char* key, int64_t lo, int64_t hi) {
  const json& v = Field(obj, path, key);
  if (!v.is_number_integer()) throw ProtocolError(Join(path, key) + ": expected an integer");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    throw ProtocolError(Join(path, key) + ": " + std::to_string(x) + " is outside [" +
                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return x;
}

std::string Str(const json& obj, const std::string& path, const char* key) {
  const json& v = Field(obj, path, key);
  if (!v.is_string()) throw ProtocolError(Join(path, key) + ": expected a string");
  return v.get<std::string>();
}

const json& Array(const json& obj, const std::string& path, const char* key, size_t size) {
  const json& v = Field(obj, path, key);
  if (!v.is_array()) throw ProtocolError(Join(path, key) + ": expected an array");
  if (size != SIZE_MAX && v.size() != size) {
    throw ProtocolError(Join(path, key) + ": " + std::to_string(v.size()) + " entries, expected " +
                        std::to_string(size));
  }
  return v;
}

// An optional count: absent or null is nullopt.
std::optional<int64_t> OptCount(const json& obj, const std::string& path, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<int64_t>() < 0) {
    throw ProtocolError(Join(path, key) + ": expected an integer >= 0");
  }
  const int64_t x = it->get<int64_t>();
  if (x > (int64_t{1} << 50)) {
    throw ProtocolError(Join(path, key) + ": " + std::to_string(x) + " is outside [0, " +
                        std::to_string(int64_t{1} << 50) + "]");
  }
  return x;
}

// null, or {"type": ..., "message": ...} as "Type: message".
std::optional<std::string> OptException(const json& obj, const std::string& path,
                                        const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  const std::string at = Join(path, key);
  if (!it->is_object()) throw ProtocolError(at + ": expected null or {\"type\", \"message\"}");
  return Str(*it, at, "type") + ": " + Str(*it, at, "message");
}

std::optional<SizingSource> ParseSizing(const json& hello) {
  const auto it = hello.find("sizing");
  if (it == hello.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) throw ProtocolError("hello: sizing: expected null or an object");
  const std::string at = "hello: sizing";
  SizingSource s;
  s.source = Str(*it, at, "source");
  if (!s.source.starts_with('/')) {
    throw ProtocolError(at + ".source: '" + s.source + "' is not an absolute path");
  }
  s.sha256 = Str(*it, at, "sha256");
  if (s.sha256.empty() || s.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw ProtocolError(at + ".sha256: expected lowercase hex");
  }
  s.kind = Str(*it, at, "kind");
  if (s.kind != "monolithic" && s.kind != "sink" && s.kind != "device-buffer") {
    throw ProtocolError(at + ".kind: '" + s.kind + "' is not monolithic | sink | device-buffer");
  }
  s.interface = Str(*it, at, "interface");
  return s;
}

// A run list of the case's rows: owners in [0, D), tokens within N[dp].
RowRuns ParseRuns(const json& runs, const std::string& path, const Case& c) {
  if (!runs.is_array()) throw ProtocolError(path + ": expected an array");
  RowRuns out;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const json& r = runs[i];
    if (r.is_object() && r.contains("pad")) {
      AppendRun(out, {RowRun::kPad, 0, Int(r, at, "pad", 0, int64_t{1} << 50)});
      continue;
    }
    const int64_t dp = Int(r, at, "dp", 0, c.config.dp - 1);
    const int64_t n = c.step.padded[static_cast<size_t>(dp)];
    const int64_t first = Int(r, at, "from", 0, n);
    AppendRun(out, {dp, first, Int(r, at, "count", 0, n - first)});
  }
  return out;
}

json ParseLine(const std::string& line, const std::string& what) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::parse_error&) {
    std::string head = line.substr(0, 60);
    for (char& ch : head) {
      if (static_cast<unsigned char>(ch) < 0x20) ch = ' ';
    }
    throw ProtocolError(what + ": not JSON: '" + head + (line.size() > 60 ? "...'" : "'"));
  }
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    throw ProtocolError(what + ": not a protocol message (no \"type\")");
  }
  if (j["type"] == "fatal") {
    const auto it = j.find("error");
    throw ProtocolError(it != j.end() && it->is_string() ? it->get<std::string>()
                                                          : "fatal error without a message");
  }
  return j;
}

}  // namespace

std::string HelloRequest() {
  return json{{"type", "hello"}, {"protocol", kProtocolVersion}}.dump();
}

std::string ByeRequest() { return json{{"type", "bye"}}.dump(); }

std::string RunRequest(int64_t id, std::span<const Case> cases,
                       std::span<const sut::DispatchPlan> plans) {
  using ordered = nlohmann::ordered_json;
  ordered out = {{"type", "run"}, {"id", id}, {"cases", ordered::array()}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const sut::DispatchPlan& plan = plans[i];
    ordered j = {{"dp", c.config.dp},
              {"tp", c.config.tp},
              {"ep", c.config.ep},
              {"dispatch", std::string(DispatchName(c.config.dispatch))},
              {"sp", plan.sp},
              {"max_num_batched_tokens", c.config.max_num_batched_tokens},
              {"num_experts", c.config.num_experts},
              {"top_k", c.config.top_k},
              {"num_layers", c.config.num_layers},
              {"num_tokens_across_dp", c.step.padded},
              {"local_sizes", plan.local_sizes ? ordered(*plan.local_sizes) : ordered(nullptr)},
              {"ranks", ordered::array()}};
    // Only when set: requests of cases without it stay as they were.
    if (c.config.chunked_prefill_size > 0) {
      j["chunked_prefill_size"] = c.config.chunked_prefill_size;
    }
    if (c.config.moe_comm != MoeComm::kNone) j["moe_comm"] = std::string(MoeCommName(c.config.moe_comm));
    // Ranks that see one gathered tensor share its run list; it is written
    // once per rank all the same, which keeps the adapter simple.
    for (size_t r = 0; r < plan.ranks.size(); ++r) {
      j["ranks"].push_back(
          {{"dp", plan.ranks[r].dp}, {"tp", plan.ranks[r].tp}, {"rows", RunsToJson(plan.Routed(r))}});
    }
    out["cases"].push_back(std::move(j));
  }
  return out.dump();
}

Hello ParseHello(const std::string& line) {
  const json j = ParseLine(line, "hello");
  if (j["type"] != "hello") throw ProtocolError("hello: got a \"" + j["type"].get<std::string>() + "\" message");
  const int64_t version = Int(j, "hello:", "protocol", 0, 1 << 20);
  if (version != kProtocolVersion) {
    throw ProtocolError("speaks protocol " + std::to_string(version) + ", r3check speaks " +
                        std::to_string(kProtocolVersion));
  }
  Hello h;
  h.engine = Str(j, "hello:", "engine");
  h.source = Str(j, "hello:", "source");
  h.sha256 = Str(j, "hello:", "sha256");
  h.engine_version = Str(j, "hello:", "engine_version");
  h.interface = Str(j, "hello:", "interface");
  h.device = Str(j, "hello:", "device");
  h.world_size = Int(j, "hello:", "world_size", 1, 1 << 20);
  h.backend = Str(j, "hello:", "backend");
  h.sizing = ParseSizing(j);
  if (j.contains("device_map") && !j["device_map"].is_null()) h.device_map = Str(j, "hello:", "device_map");
  if (j.contains("dtype_map") && !j["dtype_map"].is_null()) h.dtype_map = Str(j, "hello:", "dtype_map");
  return h;
}

std::vector<CaseReply> ParseRunReply(const std::string& line, int64_t id,
                                     std::span<const Case> cases) {
  const std::string what = "reply to run " + std::to_string(id);
  const json j = ParseLine(line, what);
  if (j["type"] != "result") {
    throw ProtocolError(what + ": got a \"" + j["type"].get<std::string>() + "\" message");
  }
  Int(j, what + ":", "id", id, id);
  const json& jcases = Array(j, what + ":", "cases", cases.size());
  std::vector<CaseReply> out(cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const std::string at = what + ": cases[" + std::to_string(i) + "]";
    CaseReply& reply = out[i];
    reply.collective = Str(jcases[i], at, "collective");
    if (reply.collective != "emulated" && reply.collective != "real") {
      throw ProtocolError(at + ".collective: '" + reply.collective + "' is not emulated | real");
    }
    // null: the engine could not build a capturer for this case (every rank
    // then reports the error).
    const json& dtype = Field(jcases[i], at, "buffer_dtype");
    reply.buffer_dtype = dtype.is_null() ? "" : Str(jcases[i], at, "buffer_dtype");
    const auto ranks = static_cast<size_t>(c.config.dp * c.config.tp);
    const json& jranks = Array(jcases[i], at, "ranks", ranks);
    reply.ranks.resize(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      const std::string rat = at + ".ranks[" + std::to_string(r) + "]";
      const json& jr = jranks[r];
      RankReply& rank = reply.ranks[r];
      rank.dp = Int(jr, rat, "dp", static_cast<int64_t>(r) / c.config.tp,
                    static_cast<int64_t>(r) / c.config.tp);
      rank.tp = Int(jr, rat, "tp", static_cast<int64_t>(r) % c.config.tp,
                    static_cast<int64_t>(r) % c.config.tp);
      rank.n = Int(jr, rat, "n", 0, int64_t{1} << 50);
      const json& err = Field(jr, rat, "error");
      if (!err.is_null()) {
        rank.error = Str(err, rat + ".error", "type") + ": " + Str(err, rat + ".error", "message");
      }
      rank.captured = ParseRuns(Field(jr, rat, "captured"), rat + ".captured", c);
      const json& gather = Field(jr, rat, "tp_gather");
      if (!gather.is_boolean()) throw ProtocolError(rat + ".tp_gather: expected true or false");
      rank.tp_gather = gather.get<bool>();
      rank.stray = Int(jr, rat, "stray", 0, int64_t{1} << 50);
      rank.undecodable = Int(jr, rat, "undecodable", 0, int64_t{1} << 50);
      rank.replay_rows = OptCount(jr, rat, "replay_rows");
      rank.replay_error = OptException(jr, rat, "replay_error");
      rank.kernel_slice_rows = OptCount(jr, rat, "kernel_slice_rows");
      if (!rank.replay_rows) {
        if (rank.replay_error) throw ProtocolError(rat + ".replay_error: given without replay_rows");
        if (rank.kernel_slice_rows) {
          throw ProtocolError(rat + ".kernel_slice_rows: given without replay_rows");
        }
      }
      if (r > 0 && rank.replay_rows.has_value() != reply.ranks[0].replay_rows.has_value()) {
        throw ProtocolError(rat + ".replay_rows: " +
                            (rank.replay_rows ? "reported, but ranks[0] reports none"
                                              : "missing, but ranks[0] reports its rows") +
                            " (a case reports them on every rank or on none)");
      }
    }
  }
  return out;
}

}  // namespace r3::engine
