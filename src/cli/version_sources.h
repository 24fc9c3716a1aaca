// `sweep`'s SOURCE arguments as the list of versions to judge:
//   FILE                 one version (a routed_experts_capturer.py)
//   FOLDER               every *.py under it, sorted by path, each one version;
//                        a folder that is a checkout (holds kCapturePath) is one
//                        version, and is not looked into
//   CHECKOUT@REV         that commit of a git checkout
//   CHECKOUT@A..B        the commits in A..B (git log A..B), oldest first, that
//                        touched the capture or the sizing code (VersionPaths())
// A path that exists is a path even when it holds an '@'.
#ifndef R3_CLI_VERSION_SOURCES_H_
#define R3_CLI_VERSION_SOURCES_H_

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/git_checkout.h"

namespace r3::cli {

inline constexpr const char* kCapturePath =
    "vllm/model_executor/layers/fused_moe/routed_experts_capturer.py";
inline constexpr const char* kSizingPath = "vllm/model_executor/layers/fused_moe/modular_kernel.py";

// SGLang's capturer, where it has lived, and the base class beside it.
inline constexpr const char* kSglangCapturePath = "python/sglang/srt/state_capturer/routed_experts.py";
// vllm-ascend's three generations of its capture file (docs/engines.md).
inline constexpr const char* kAscendPatchPath =
    "vllm_ascend/patch/worker/patch_routed_experts_capture.py";
inline constexpr const char* kAscendSubclassPath = "vllm_ascend/ops/fused_moe/routed_experts_capture.py";
inline constexpr const char* kAscendInitPatchPath =
    "vllm_ascend/patch/worker/patch_routed_experts_capturer.py";
inline constexpr const char* kSglangOldCapturePath =
    "python/sglang/srt/layers/moe/routed_experts_capturer.py";

// The files of a checkout that make up a version: vLLM's capture and
// sizing code, then SGLang's capturer and its base class (each place they
// have lived). A checkout has one engine's.
const std::vector<std::string>& VersionPaths();

// One of the capture files above (vLLM's or SGLang's).
bool IsCapturePath(const std::string& path);

// A SOURCE that names nothing to judge, or a git failure: one line that
// starts with the SOURCE. Exit status 2.
class SourceError : public std::runtime_error {
 public:
  explicit SourceError(const std::string& what) : std::runtime_error(what) {}
};

struct Version {
  enum class Kind { kFile, kCheckout, kRevision };
  Kind kind = Kind::kFile;
  std::string source;  // the SOURCE argument it came from
  std::string label;   // the path; CHECKOUT@SHORTSHA for a revision
  std::string path;    // the file or checkout on disk (empty for a revision)
  std::optional<Commit> commit;              // a revision's
  std::shared_ptr<const GitCheckout> git;    // a revision's checkout
};

std::string KindName(Version::Kind kind);  // file | checkout | revision

struct ExpandedSource {
  std::vector<Version> versions;
  // CHECKOUT@A..B: commit A, the range's start (not one of `versions`).
  std::optional<Version> range_start;
};

// Throws SourceError.
ExpandedSource ExpandSource(const std::string& source);

}  // namespace r3::cli

#endif  // R3_CLI_VERSION_SOURCES_H_
