#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "r3/sut/mutants.h"
#include "r3/sut/replay_sizing.h"
#include "r3/sut/sut.h"

namespace r3::cli {

void AddMutantsCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("mutants", "list the seeded bugs, SUTs and sizing policies");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "the mutants as a JSON array (what scripts read)");
  cmd->callback([exit_code, json] {
    if (*json) {
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
        out.push_back({{"name", m.name},
                       {"description", m.description},
                       {"equivalent", m.equivalent},
                       {"gpu_only", m.gpu_only},
                       {"host_capture", m.host_capture},
                       {"dispatch", m.dispatch}});
      }
      std::printf("%s\n", out.dump(2).c_str());
      *exit_code = 0;
      return;
    }
    std::printf("mutants (--mutant NAME):\n");
    for (const sut::MutantInfo& m : sut::MutantCatalogue()) {
      std::printf("  %-24s %s%s%s\n", std::string(m.name).c_str(),
                  std::string(m.description).c_str(), m.equivalent ? " [equivalent]" : "",
                  m.gpu_only ? " [gpu only]" : m.dispatch ? " [dispatch plan]" : "");
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
