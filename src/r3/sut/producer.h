// Where observations come from. Every front end (check, explain, verify,
// minimize, sizing, the properties, the fuzz replay) judges a Producer's
// observations, so any of them works with any producer: the host SUT
// (RunSut), an engine adapter running the engine's own capture code
// (r3::engine), or the CUDA capture path (r3::gpu).
#ifndef R3_SUT_PRODUCER_H_
#define R3_SUT_PRODUCER_H_

#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "r3/case/case.h"
#include "r3/case/layout_domain.h"
#include "r3/sut/observation.h"
#include "r3/sut/sut.h"

namespace r3::sut {

// A producer outside this process failed (an engine adapter died, hung, or
// answered nonsense; the GPU failed): bad environment, exit status 2, never
// a verdict.
class ExternalSutError : public std::runtime_error {
 public:
  explicit ExternalSutError(const std::string& what) : std::runtime_error(what) {}
};

class Producer {
 public:
  virtual ~Producer() = default;

  // One observation per case, in order. Batching many cases per call keeps
  // a process boundary (or a GPU launch) cheap. Throws ExternalSutError.
  virtual std::vector<Observation> Observe(std::span<const Case> cases) = 0;
  // For reports: "vllm-post-50874", "vllm:/path/routed_experts_capturer.py
  // (sha256 1a2b3c4d)".
  virtual std::string Label() const = 0;
  // File-name safe, for default regression names: "vllm-post-50874",
  // "vllm-engine".
  virtual std::string Id() const = 0;
  // An engine's own replay-buffer sizing code, as observations name it
  // ("vllm sizing: RoutedExpertsSink (routed_experts_capturer.py, sha256
  // 1a2b3c4d5e6f)"); empty when the built-in policy sizes the buffer.
  virtual std::string SizingLabel() const { return ""; }
  // What an engine said of itself: its version ("0.11.0", "unknown") and the
  // interface the adapter drove ("RoutedExpertsCapturer(...)"); empty else.
  virtual std::string EngineVersion() const { return ""; }
  virtual std::string Interface() const { return ""; }

  // The layouts it models (layout_domain.h): all of vLLM's but for an
  // engine that has fewer. Observe refuses a case outside them
  // (ExternalSutError naming the field), generated cases are fitted into
  // them, and the minimizer never leaves them.
  virtual LayoutDomain Domain() const { return {}; }

  // The settings it runs under: the built-in SUT version, the sizing policy
  // and the mutants (an engine honours r3check's dispatch and sizing ones).
  const SutOptions& options() const { return options_; }

 protected:
  explicit Producer(SutOptions options) : options_(options) {}

 private:
  SutOptions options_;
};

// The host SUT: RunSut on each case.
std::shared_ptr<Producer> MakeHostProducer(SutOptions options = {});

}  // namespace r3::sut

#endif  // R3_SUT_PRODUCER_H_
