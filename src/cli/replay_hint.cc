#include "cli/replay_hint.h"

#include <sstream>

namespace r3::cli {
namespace {

// A word the shell reads back as itself.
std::string ShellWord(const std::string& word) {
  bool plain = !word.empty();
  for (char ch : word) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || std::string("-_./:=+,@%").find(ch) != std::string::npos;
    plain = plain && ok;
  }
  if (plain) return word;
  std::string quoted = "'";
  for (char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

}  // namespace

std::string VerdictFlags(const SutFlags& flags, const GpuFlags& gpu) {
  const SutFlags defaults;
  std::string out;
  const auto add = [&out](const std::string& flag, const std::string& value) {
    out += " " + flag + " " + ShellWord(value);
  };
  if (flags.sut != defaults.sut) add("--sut", flags.sut);
  for (const std::string& m : flags.mutants) add("--mutant", m);
  if (flags.policy != defaults.policy) add("--policy", flags.policy);
  if (!flags.engine_python.empty()) add("--engine-python", flags.engine_python);
  if (flags.engine_launch != defaults.engine_launch) add("--engine-launch", flags.engine_launch);
  if (flags.nproc != defaults.nproc) add("--nproc", std::to_string(flags.nproc));
  for (const std::string& a : flags.engine_launch_args) out += " --engine-launch-arg=" + ShellWord(a);
  if (flags.engine_device != defaults.engine_device) add("--engine-device", flags.engine_device);
  if (!flags.engine_sizing.empty()) add("--engine-sizing", flags.engine_sizing);
  if (flags.engine_timeout_s != defaults.engine_timeout_s) {
    std::ostringstream seconds;
    seconds.precision(17);
    seconds << flags.engine_timeout_s;
    add("--engine-timeout", seconds.str());
  }
  if (gpu.gpu) out += " --gpu";
  if (gpu.gpu && gpu.ranks != GpuFlags{}.ranks) add("--gpu-ranks", gpu.ranks);
  if (gpu.gpu && gpu.graph) out += " --gpu-graph";
  return out;
}

}  // namespace r3::cli
