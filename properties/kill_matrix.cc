#include "properties/kill_matrix.h"

#include <chrono>
#include <memory>
#include <sstream>

#include <rapidcheck.h>

#include "properties/invariant_property.h"
#include "properties/quiet_listener.h"
#include "r3/sut/mutants.h"

namespace r3::props {

std::vector<KillTarget> KillTargets() {
  std::vector<KillTarget> targets;
  for (const sut::MutantInfo& info : sut::MutantCatalogue()) {
    if (info.gpu_only) continue;
    KillTarget t;
    t.name = "mutant " + std::string(info.name);
    t.description = std::string(info.description);
    t.options.mutants.set(info.id);
    t.must_survive = info.equivalent;
    targets.push_back(std::move(t));
  }
  KillTarget pre;
  pre.name = "sut vllm-pre-50874";
  pre.description = "vLLM before #50874: no ep-sp-shards capture branch (pr50874 sizing)";
  pre.options.version = sut::Version::kPre50874;
  targets.push_back(std::move(pre));
  KillTarget legacy;
  legacy.name = "policy legacy";
  legacy.description = "pre-#50874 sizing: the replay buffer has M rows";
  legacy.options.policy = sut::Policy::kLegacy;
  targets.push_back(std::move(legacy));
  KillTarget tight;
  tight.name = "policy tight";
  tight.description = "the exact bound (warmup kernel rows): safe, must survive";
  tight.options.policy = sut::Policy::kTight;
  tight.must_survive = true;
  targets.push_back(std::move(tight));
  return targets;
}

PropertyRun RunProperty(std::optional<check::Invariant> inv, const sut::SutOptions& options,
                        uint64_t seed, int max_success, bool shrink) {
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = max_success;
  params.disableShrinking = !shrink;
  rc::detail::TestMetadata metadata;
  metadata.id = "kill-matrix";
  QuietListener listener;
  const std::shared_ptr<sut::Producer> producer = sut::MakeHostProducer(options);
  const auto start = std::chrono::steady_clock::now();
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [inv, producer] {
        if (inv) {
          InvariantHolds(*inv, *producer);
        } else {
          AllInvariantsHold(*producer);
        }
      },
      metadata, params, listener);
  PropertyRun run;
  run.invariant = inv;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rc::detail::FailureResult failure;
  rc::detail::SuccessResult success;
  if (result.match(failure)) {
    run.failed = true;
    run.cases = failure.numSuccess + 1;
    run.shrinks = static_cast<int>(failure.reproduce.shrinkPath.size());
    run.message = failure.description;
    for (const auto& [type, value] : failure.counterExample) run.counterexample += value;
    while (!run.counterexample.empty() && run.counterexample.front() == '\n') {
      run.counterexample.erase(0, 1);
    }
  } else if (result.match(success)) {
    run.cases = success.numSuccess;
  } else {
    run.failed = true;  // gave up or error: report it, never count it as a pass
    run.error = true;
    std::ostringstream text;
    rc::detail::printResultMessage(result, text);
    run.message = text.str();
  }
  return run;
}

}  // namespace r3::props
