// The systems under test: host implementations of vLLM's side of routed
// experts capture, written independently of r3::model so that the model is
// checked against something else than itself.
#ifndef R3_SUT_SUT_H_
#define R3_SUT_SUT_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "r3/case/case.h"
#include "r3/sut/dispatch_plan.h"
#include "r3/sut/mutants.h"
#include "r3/sut/observation.h"
#include "r3/sut/replay_sizing.h"

namespace r3::sut {

enum class Version {
  kPost50874,  // five capture branches, ep-sp-shards included (default)
  kPre50874,   // no ep-sp-shards branch
};

struct SutInfo {
  Version id;
  std::string_view name;
  std::string_view description;
};

std::span<const SutInfo> SutCatalogue();
std::optional<Version> FindSut(std::string_view name);
std::string_view SutName(Version version);

// A plain value: which built-in SUT, sizing policy and mutants. Who
// produces the observations is a Producer (producer.h).
struct SutOptions {
  Version version = Version::kPost50874;
  Policy policy = Policy::kPr50874;
  MutantSet mutants;
};

// Switches on the mutants of a comma-separated list of names (empty items
// are ignored), as R3_MUTANT and R3_FUZZ_MUTANT spell them. Returns the
// first unknown name (nothing is set then), or nullopt.
std::optional<std::string> SetMutantsByName(SutOptions& options, std::string_view names);

// Runs one step of dispatch, kernel buffer check and capture for every rank,
// with the built-in SUT. A pure function of its arguments.
Observation RunSut(const Case& c, const SutOptions& options);

// Who allocates the capturer buffer: the built-in SUT, or an engine's own
// capturer (which the capturer-rows-per-shard mutant cannot reach).
enum class Capturer { kBuiltIn, kEngine };

// Everything of a step's observation that comes before capture: local_sizes,
// the replay buffer and its check per rank, n per rank, dtypes. RunSut and
// the engine SUTs fill in the capture on top of it.
Observation ObserveDispatch(const Case& c, const SutOptions& options, const DispatchPlan& plan,
                            Capturer capturer);

}  // namespace r3::sut

#endif  // R3_SUT_SUT_H_
