// How many threads the pools should start: the cores this process may run
// on, not the machine's. std::thread::hardware_concurrency() counts every
// online CPU; in a container or under a CPU quota (a leased slice of a big
// GPU host) that can be several times what the process gets, and a pool of
// that many threads spends its time switching instead of working.
#ifndef R3_CASE_USABLE_CORES_H_
#define R3_CASE_USABLE_CORES_H_

#include <optional>
#include <string_view>

namespace r3 {

// Cores a cgroup v2 `cpu.max` line grants ("QUOTA PERIOD", QUOTA "max"
// for none), rounded up; nullopt when it sets no limit or is unreadable.
std::optional<unsigned> CoresFromCpuMax(std::string_view cpu_max);

// The least of what is known: hardware_concurrency() (0: unknown), the
// CPUs of the affinity mask (0: unknown) and the cgroup's quota; at least 1.
unsigned CombineCores(unsigned hardware, unsigned affinity, std::optional<unsigned> quota);

// min(CPUs in this thread's affinity mask, the cgroup's CPU quota),
// falling back to hardware_concurrency(); at least 1. UsableCores reads it
// once (the pools' size); MeasureUsableCores reads it now.
unsigned UsableCores();
unsigned MeasureUsableCores();

}  // namespace r3

#endif  // R3_CASE_USABLE_CORES_H_
