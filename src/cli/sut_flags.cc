#include "cli/sut_flags.h"

namespace r3::cli {

void SutFlags::AddTo(CLI::App& app) {
  app.add_option("--sut", sut, "system under test: vllm-post-50874 (default) | vllm-pre-50874");
  // One value per flag: `--mutant A CASE` must not swallow CASE as a mutant.
  app.add_option("--mutant", mutants, "switch on a seeded bug (repeatable; see `r3check mutants`)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--policy", policy, "replay sizing policy: legacy | pr50874 (default) | tight");
}

sut::SutOptions SutFlags::Resolve() const {
  sut::SutOptions options;
  const auto version = sut::FindSut(sut);
  if (!version) throw UsageError("--sut: unknown system under test '" + sut + "'");
  options.version = *version;
  const auto p = sut::FindPolicy(policy);
  if (!p) throw UsageError("--policy: unknown policy '" + policy + "'");
  options.policy = *p;
  for (const std::string& name : mutants) {
    const auto m = sut::FindMutant(name);
    if (!m) throw UsageError("--mutant: unknown mutant '" + name + "' (see `r3check mutants`)");
    options.mutants.set(*m);
  }
  return options;
}

}  // namespace r3::cli
