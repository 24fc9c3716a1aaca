#include "r3/case/usable_cores.h"

#include <gtest/gtest.h>

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

TEST(UsableCoresTest, AtLeastOneAndNoMoreThanTheMachinesCpus) {
  EXPECT_GE(UsableCores(), 1u);
  if (std::thread::hardware_concurrency() > 0) {
    EXPECT_LE(UsableCores(), std::thread::hardware_concurrency());
  }
}

}  // namespace
}  // namespace r3
