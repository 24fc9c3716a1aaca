#include "r3/case/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace r3 {
namespace {

TEST(ParallelForTest, EveryIndexRunsOnceWhateverTheCount) {
  for (const size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{64}, size_t{1000}, size_t{4099}}) {
    std::vector<std::atomic<int>> runs(n);
    ParallelFor(n, /*threads=*/8, [&](size_t i) { runs[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(runs[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

// Skewed work (one index far slower than the rest) still leaves each result
// in its own slot: the output is the same as one thread's.
TEST(ParallelForTest, SkewedWorkGivesTheSerialResult) {
  constexpr size_t kN = 2000;
  std::vector<long> parallel(kN), serial(kN);
  const auto work = [](size_t i) {
    long v = static_cast<long>(i);
    for (size_t j = 0; j < (i == 3 ? 2'000'000 : 10); ++j) v = v * 31 + static_cast<long>(j);
    return v;
  };
  ParallelFor(kN, /*threads=*/8, [&](size_t i) { parallel[i] = work(i); });
  ParallelFor(kN, /*threads=*/1, [&](size_t i) { serial[i] = work(i); });
  EXPECT_EQ(parallel, serial);
}

// Several indices throw: the one rethrown is the lowest, as one thread
// would have thrown it first.
TEST(ParallelForTest, TheLowestFailingIndexIsRethrown) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    try {
      ParallelFor(5000, /*threads=*/8, [&](size_t i) {
        if (i == 4321 || i == 977 || i == 2500) throw std::runtime_error(std::to_string(i));
      });
      FAIL() << "nothing was rethrown";
    } catch (const std::runtime_error& e) {
      ASSERT_STREQ(e.what(), "977");
    }
  }
}

}  // namespace
}  // namespace r3
