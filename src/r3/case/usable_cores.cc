#include "r3/case/usable_cores.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>
#include <thread>

namespace r3 {
namespace {

std::optional<long long> ParseWhole(std::string_view text) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.begin(), text.end(), v);
  if (ec != std::errc() || end != text.end()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<unsigned> CoresFromCpuMax(std::string_view cpu_max) {
  while (!cpu_max.empty() && (cpu_max.back() == '\n' || cpu_max.back() == ' ')) {
    cpu_max.remove_suffix(1);
  }
  const size_t space = cpu_max.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::optional<long long> quota = ParseWhole(cpu_max.substr(0, space));
  const std::optional<long long> period = ParseWhole(cpu_max.substr(space + 1));
  if (!quota || !period || *quota <= 0 || *period <= 0) return std::nullopt;  // "max": no limit
  const long long cores = (*quota + *period - 1) / *period;
  return static_cast<unsigned>(std::min<long long>(cores, 1 << 20));
}

unsigned CombineCores(unsigned hardware, unsigned affinity, std::optional<unsigned> quota) {
  unsigned cores = hardware;
  if (affinity > 0 && (cores == 0 || affinity < cores)) cores = affinity;
  if (quota && (cores == 0 || *quota < cores)) cores = *quota;
  return std::max(1u, cores);
}

unsigned MeasureUsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  const unsigned affinity =
      sched_getaffinity(0, sizeof set, &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 0;
  std::ifstream in("/sys/fs/cgroup/cpu.max");
  std::string line;
  std::optional<unsigned> quota;
  if (in && std::getline(in, line)) quota = CoresFromCpuMax(line);
  return CombineCores(std::thread::hardware_concurrency(), affinity, quota);
}

unsigned UsableCores() {
  static const unsigned cores = MeasureUsableCores();
  return cores;
}

}  // namespace r3
