// r3check engines: the engine adapters, how to call them and what each needs.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/data_dirs.h"
#include "cli/sut_flags.h"
#include "r3/engine/engine_sut.h"

namespace r3::cli {

void AddEnginesCommand(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "engines", "list the engine adapters (--sut vllm:PATH | sglang:PATH | vllm-ascend:PATH | exec:CMD) and what each needs");
  cmd->callback([exit_code] {
    // A listing that points at a folder that is not there would mislead.
    const std::string dir = DefaultEnginesDir();
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      throw UsageError((std::getenv("R3_ENGINES_DIR") != nullptr && *std::getenv("R3_ENGINES_DIR")
                            ? "R3_ENGINES_DIR"
                            : "the engines folder") +
                       std::string(": no such folder: ") + dir);
    }
    std::cout << "engine adapters (docs/engines.md; adapters in " << dir << ")\n";
    for (const engine::AdapterInfo& a : engine::AdapterCatalogue()) {
      std::cout << "  " << a.name << "\n    " << a.usage << "\n    needs: " << a.needs << "\n";
    }
    std::cout << "engine flags: --engine-python, --engine-launch none|torchrun, --nproc N, "
                 "--engine-launch-arg ARG, --engine-device cpu|cuda, --engine-timeout SECONDS, "
                 "--engine-sizing FILE (vllm), --engine-base PATH (vllm-ascend)\n";
    *exit_code = 0;
  });
}

}  // namespace r3::cli
