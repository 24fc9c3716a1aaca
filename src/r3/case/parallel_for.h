// body(i) for i in [0, n) on up to `threads` threads; each index is written
// by exactly one thread, so results stay in order and deterministic. The
// first exception (lowest index) is rethrown after all threads stop. Used
// where per-case work is pure: the judge of a batch, the GPU path's host side.
#ifndef R3_CASE_PARALLEL_FOR_H_
#define R3_CASE_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace r3 {

template <typename Body>
void ParallelFor(size_t n, unsigned threads, const Body& body) {
  // Below this many items per thread a thread costs more than it saves.
  constexpr size_t kMinPerThread = 8;
  threads = static_cast<unsigned>(std::min<size_t>(threads, n / kMinPerThread));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) body(i);
    return;
  }
  // Threads take the next block of indices as they finish one: case sizes
  // are skewed (a few huge cases), and fixed shares would leave most threads
  // idle behind the one that drew them. Blocks go out in index order, so
  // every index below a thread's failing one was taken by some thread.
  const size_t block = std::max<size_t>(1, n / (size_t{threads} * 32));
  std::atomic<size_t> next{0};
  std::vector<size_t> failed_at(threads, n);
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (size_t first = next.fetch_add(block); first < n; first = next.fetch_add(block)) {
        for (size_t i = first; i < std::min(n, first + block); ++i) {
          try {
            body(i);
          } catch (...) {
            errors[t] = std::current_exception();
            failed_at[t] = i;
            return;
          }
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  const auto lowest = std::min_element(failed_at.begin(), failed_at.end());
  if (*lowest < n) std::rethrow_exception(errors[static_cast<size_t>(lowest - failed_at.begin())]);
}

}  // namespace r3

#endif  // R3_CASE_PARALLEL_FOR_H_
