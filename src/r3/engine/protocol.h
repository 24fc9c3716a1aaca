// The engine protocol, version 1 (docs/engines.md): JSON lines between
// r3check and an adapter process. This file builds requests from the SUT
// layer's dispatch plan and reads replies strictly: every field is checked,
// and a bad one is a ProtocolError naming its path in the reply.
#ifndef R3_ENGINE_PROTOCOL_H_
#define R3_ENGINE_PROTOCOL_H_

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/case/rows.h"
#include "r3/sut/dispatch_plan.h"

namespace r3::engine {

inline constexpr int kProtocolVersion = 1;

// The longest protocol line r3check reads from an adapter (newline excluded):
// 4 MiB, or twice the request's size for a larger request (a reply may echo
// the rows it was sent). A longer line is an error, not memory. The replies
// to the largest requests r3check sends stay below it (protocol_test
// measures them).
inline constexpr size_t kMaxLineBytes = size_t{4} << 20;
inline constexpr size_t ReplyLineCap(size_t request_bytes) {
  return request_bytes > kMaxLineBytes / 2 ? 2 * request_bytes : kMaxLineBytes;
}

class ProtocolError : public std::runtime_error {
 public:
  explicit ProtocolError(const std::string& what) : std::runtime_error(what) {}
};

// The engine's own replay-buffer sizing code, when the adapter loaded it
// (hello's optional "sizing"): vLLM's FusedMoEExpertsMonolithic.set_capture_fn
// ("monolithic") or RoutedExpertsSink ("sink").
struct SizingSource {
  std::string source;  // absolute path of the file that holds it
  std::string sha256;
  std::string kind;    // monolithic | sink
  std::string interface;
};

struct Hello {
  std::string engine;
  std::string source;
  std::string sha256;
  std::string engine_version;
  std::string interface;
  std::string device;
  int64_t world_size = 1;
  std::string backend;
  std::optional<SizingSource> sizing;  // null or absent: none loaded
  std::string device_map;  // "cuda -> cpu" when CUDA the engine named was mapped; else empty
  // "uint16 -> int32, ..." when the adapter's torch lacks those dtypes and a
  // wider one stands in (invariant 6 then sees the wider dtype); else empty.
  std::string dtype_map;
};

struct RankReply {
  int64_t dp = 0;
  int64_t tp = 0;
  int64_t n = 0;
  std::optional<std::string> error;  // "AssertionError: ...", "hang: ..."
  RowRuns captured;
  bool tp_gather = false;
  int64_t stray = 0;
  int64_t undecodable = 0;
  // Optional (absent or null: not reported). The engine's own sizing code,
  // when it ran: the rows of the int16 replay buffer it allocated for this
  // rank, its buffer check's exception for the kernel's n input rows
  // ("ValueError: ..."), and the rows of the slice its hand-off gave the
  // kernel. A case reports replay_rows on every rank or on none;
  // replay_error and kernel_slice_rows need replay_rows.
  std::optional<int64_t> replay_rows;
  std::optional<std::string> replay_error;
  std::optional<int64_t> kernel_slice_rows;
};

struct CaseReply {
  std::string collective;  // emulated | real
  std::string buffer_dtype;  // empty: no capturer could be built
  std::vector<RankReply> ranks;
};

std::string HelloRequest();
std::string RunRequest(int64_t id, std::span<const Case> cases,
                       std::span<const sut::DispatchPlan> plans);
std::string ByeRequest();

// A fatal message from the adapter is thrown as a ProtocolError carrying its
// text; anything that is not the expected message is one too.
Hello ParseHello(const std::string& line);
std::vector<CaseReply> ParseRunReply(const std::string& line, int64_t id,
                                     std::span<const Case> cases);

}  // namespace r3::engine

#endif  // R3_ENGINE_PROTOCOL_H_
