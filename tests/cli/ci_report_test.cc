// The records behind check/verify --json and --junit.
#include "cli/ci_report.h"

#include <gtest/gtest.h>

#include "r3/case/case_format.h"
#include "r3/check/report.h"
#include "r3/check/run_case.h"
#include "r3/sut/producer.h"
#include "r3/sut/sut.h"

namespace r3::cli {
namespace {

Case TinyCase() {
  return ParseCase(
      "r3case 1\ndp 1\ntp 1\nep off\ndispatch naive\nsp auto\nmax_num_batched_tokens 4\n"
      "top_k 1\nnum_experts 4\nnum_layers 2\ntokens 2\n",
      "test");
}

// A GPU observation's failure carries what the device checked.
TEST(CiReportTest, AFailureOnTheGpuCarriesTheDeviceCheck) {
  const Case c = TinyCase();
  sut::Observation obs = sut::RunSut(c, {});
  sut::DeviceCheck& device = obs.device.emplace();
  device.mode = "emulated on 1 GPU";
  device.steps = 1;
  device.values_checked = 6;
  device.wrong_values = 1;
  device.step_wrong_values = 1;
  device.first_mismatch = device.step_first_mismatch = sut::Mismatch{0, 0, 2, 1, 0, 7, 3};
  const check::CaseResult result = check::JudgeObservation(c, std::move(obs));
  ASSERT_EQ(check::VerdictWord(result), "fail");
  const auto producer = sut::MakeHostProducer({});
  const nlohmann::ordered_json j =
      RecordJson(MakeRecord("x.r3case", "check", c, result, *producer, /*listed=*/false));
  ASSERT_TRUE(j.contains("device")) << j.dump(2);
  EXPECT_EQ(j["device"]["mode"], "emulated on 1 GPU");
  EXPECT_EQ(j["device"]["wrong_values"], 1);
  EXPECT_EQ(j["device"]["first_mismatch"]["got"], 7);
}

// The host SUT's observations have no device: no such key.
TEST(CiReportTest, AHostFailureHasNoDeviceKey) {
  const Case c = TinyCase();
  sut::Observation obs = sut::RunSut(c, {});
  obs.capturer_rows = 1;  // invariant 2 fails
  const check::CaseResult result = check::JudgeObservation(c, std::move(obs));
  ASSERT_EQ(check::VerdictWord(result), "fail");
  const auto producer = sut::MakeHostProducer({});
  const nlohmann::ordered_json j =
      RecordJson(MakeRecord("x.r3case", "check", c, result, *producer, /*listed=*/false));
  EXPECT_FALSE(j.contains("device")) << j.dump(2);
  EXPECT_TRUE(j.contains("violations"));
}

}  // namespace
}  // namespace r3::cli
