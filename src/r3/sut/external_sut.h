// A system under test that lives outside r3check: an engine adapter
// process running the engine's own capture code (src/r3/engine). The SUT
// layer only knows this interface, so every front end that runs a SUT runs
// an external one unchanged (RunSut forwards to it).
#ifndef R3_SUT_EXTERNAL_SUT_H_
#define R3_SUT_EXTERNAL_SUT_H_

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/sut/observation.h"

namespace r3::sut {

struct SutOptions;

// The external system failed (it died, hung, or answered nonsense): bad
// environment, exit status 2, never a verdict.
class ExternalSutError : public std::runtime_error {
 public:
  explicit ExternalSutError(const std::string& what) : std::runtime_error(what) {}
};

class ExternalSut {
 public:
  virtual ~ExternalSut() = default;
  // One observation per case, in order. Batching many cases per call keeps
  // the process boundary cheap. Throws ExternalSutError.
  virtual std::vector<Observation> Run(std::span<const Case> cases,
                                       const SutOptions& options) = 0;
  // For reports: "vllm:/path/routed_experts_capturer.py (sha256 1a2b3c4d)".
  virtual std::string Label() const = 0;
  // File-name safe, for default regression names: "vllm-engine".
  virtual std::string Id() const = 0;
  // The engine's own replay-buffer sizing code it loaded, as observations
  // name it ("vllm sizing: RoutedExpertsSink (routed_experts_capturer.py,
  // sha256 1a2b3c4d5e6f)"); empty when it loaded none.
  virtual std::string SizingLabel() const { return ""; }
  // What the engine said of itself: its version ("0.11.0", "unknown") and
  // the interface the adapter drove ("RoutedExpertsCapturer(...)").
  virtual std::string EngineVersion() const { return ""; }
  virtual std::string Interface() const { return ""; }
};

}  // namespace r3::sut

#endif  // R3_SUT_EXTERNAL_SUT_H_
