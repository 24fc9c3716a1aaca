// body(i) for i in [0, n) on up to `threads` threads; each index is written
// by exactly one thread, so results stay in order and deterministic. The
// first exception (lowest index) is rethrown after all threads stop. Used
// where per-case work is pure: the judge of a batch, the GPU path's host side.
#ifndef R3_CASE_PARALLEL_FOR_H_
#define R3_CASE_PARALLEL_FOR_H_

#include <algorithm>
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
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const size_t first = n * t / threads, last = n * (t + 1) / threads;
      for (size_t i = first; i < last; ++i) {
        try {
          body(i);
        } catch (...) {
          errors[t] = std::current_exception();
          return;
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  for (unsigned t = 0; t < threads; ++t) {
    if (errors[t]) std::rethrow_exception(errors[t]);  // chunks are in index order
  }
}

}  // namespace r3

#endif  // R3_CASE_PARALLEL_FOR_H_
