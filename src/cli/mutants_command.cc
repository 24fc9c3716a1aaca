#include <cstdio>

#include "cli/commands.h"
#include "r3/sut/mutants.h"
#include "r3/sut/replay_sizing.h"
#include "r3/sut/sut.h"

namespace r3::cli {

void AddMutantsCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("mutants", "list the seeded bugs, SUTs and sizing policies");
  cmd->callback([exit_code] {
    std::printf("mutants (--mutant NAME):\n");
    for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
      std::printf("  %-24s %s%s%s\n", std::string(m.name).c_str(),
                  std::string(m.description).c_str(), m.equivalent ? " [equivalent]" : "",
                  m.gpu_only ? " [gpu only]" : "");
    }
    std::printf("systems under test (--sut NAME):\n");
    for (const sut::SutInfo& s : sut::SutCatalogue()) {
      std::printf("  %-24s %s\n", std::string(s.name).c_str(), std::string(s.description).c_str());
    }
    std::printf("sizing policies (--policy NAME):\n");
    for (const sut::PolicyInfo& p : sut::PolicyCatalogue()) {
      std::printf("  %-24s %s\n", std::string(p.name).c_str(), std::string(p.description).c_str());
    }
    *exit_code = 0;
  });
}

}  // namespace r3::cli
