#include "r3/case/usable_cores.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <thread>

namespace r3 {
namespace {

TEST(CoresFromCpuMaxTest, AQuotaIsItsCoresRoundedUp) {
  EXPECT_EQ(CoresFromCpuMax("1600000 100000"), 16u);
  EXPECT_EQ(CoresFromCpuMax("150000 100000\n"), 2u);
  EXPECT_EQ(CoresFromCpuMax("50000 100000"), 1u);
}

TEST(CoresFromCpuMaxTest, NoQuotaOrAnUnreadableLineSetsNoLimit) {
  EXPECT_EQ(CoresFromCpuMax("max 100000"), std::nullopt);
  EXPECT_EQ(CoresFromCpuMax(""), std::nullopt);
  EXPECT_EQ(CoresFromCpuMax("100000"), std::nullopt);
  EXPECT_EQ(CoresFromCpuMax("12x 100000"), std::nullopt);
  EXPECT_EQ(CoresFromCpuMax("100000 0"), std::nullopt);
  EXPECT_EQ(CoresFromCpuMax("-1 100000"), std::nullopt);
}

TEST(CoresFromCpuMaxTest, TheEdgesOfAQuota) {
  EXPECT_EQ(CoresFromCpuMax("0 100000"), std::nullopt);
  EXPECT_EQ(CoresFromCpuMax("1 100000"), 1u);
  EXPECT_EQ(CoresFromCpuMax("100001 100000"), 2u);
  EXPECT_EQ(CoresFromCpuMax("100000 100000"), 1u);
  // An absurd quota is capped, not wrapped.
  EXPECT_EQ(CoresFromCpuMax("9223372036854775807 1"), 1u << 20);
  EXPECT_EQ(CoresFromCpuMax("1048577 1"), 1u << 20);
  EXPECT_EQ(CoresFromCpuMax("1048575 1"), (1u << 20) - 1);
}

TEST(CombineCoresTest, TheLeastKnownLimitWins) {
  // A leased slice of a big GPU host: the machine's CPUs, then a mask or a
  // quota of 16.
  EXPECT_EQ(CombineCores(/*hardware=*/192, /*affinity=*/16, /*quota=*/std::nullopt), 16u);
  EXPECT_EQ(CombineCores(/*hardware=*/192, /*affinity=*/192, /*quota=*/16), 16u);
  EXPECT_EQ(CombineCores(/*hardware=*/192, /*affinity=*/8, /*quota=*/16), 8u);
  EXPECT_EQ(CombineCores(/*hardware=*/4, /*affinity=*/8, /*quota=*/16), 4u);
  EXPECT_EQ(CombineCores(/*hardware=*/16, /*affinity=*/16, /*quota=*/std::nullopt), 16u);
  EXPECT_EQ(CombineCores(/*hardware=*/8, /*affinity=*/1, /*quota=*/std::nullopt), 1u);
}

TEST(CombineCoresTest, UnknownValuesSetNoLimitAndTheAnswerIsAtLeastOne) {
  EXPECT_EQ(CombineCores(/*hardware=*/0, /*affinity=*/6, /*quota=*/std::nullopt), 6u);
  EXPECT_EQ(CombineCores(/*hardware=*/0, /*affinity=*/0, /*quota=*/3), 3u);
  EXPECT_EQ(CombineCores(/*hardware=*/12, /*affinity=*/0, /*quota=*/std::nullopt), 12u);
  EXPECT_EQ(CombineCores(/*hardware=*/0, /*affinity=*/0, /*quota=*/std::nullopt), 1u);
  EXPECT_EQ(CombineCores(/*hardware=*/8, /*affinity=*/4, /*quota=*/0), 1u);
}

TEST(UsableCoresTest, AnAffinityMaskOfOneCpuIsOneCore) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const unsigned measured = MeasureUsableCores();
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(measured, 1u);
  // Back on every CPU of the mask: no more than the mask allows.
  EXPECT_LE(MeasureUsableCores(), static_cast<unsigned>(CPU_COUNT(&before)));
}

TEST(UsableCoresTest, AtLeastOneAndNoMoreThanTheMachinesCpus) {
  EXPECT_GE(UsableCores(), 1u);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_LE(UsableCores(), std::thread::hardware_concurrency());
  }
}

}  // namespace
}  // namespace r3
