#include "proto_convert/measure_result.h"

#include <cmath>
#include <limits>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(MeasureResultTest, RunSuccessKeepsCostsAndSumsStageTimes) {
  proto::RunResult run;
  run.add_costs(1e-3);
  run.add_costs(2e-3);
  run.set_load_seconds(0.5);
  run.set_check_seconds(0.25);
  run.set_run_seconds(1.0);
  run.set_prepare_seconds(2.0);
  MeasureResult result = ToMeasureResult(run, 1234.5);
  EXPECT_TRUE(result.ok());
  EXPECT_THAT(result.costs, ElementsAre(1e-3, 2e-3));
  EXPECT_DOUBLE_EQ(result.all_cost, 3.75);
  EXPECT_EQ(result.timestamp, 1234.5);
}

TEST(MeasureResultTest, RunFailureRecordsTheAutoTvmPlaceholderCost) {
  proto::RunResult run;
  run.set_error_no(static_cast<int>(MeasureErrorNo::kWrongAnswer));
  run.set_error_msg("index 3");
  run.add_costs(5e-3);  // whatever a failed run says it cost, records hold 1e9
  MeasureResult result = ToMeasureResult(run, 0);
  EXPECT_EQ(result.error_no, MeasureErrorNo::kWrongAnswer);
  EXPECT_EQ(result.error_msg, "index 3");
  EXPECT_THAT(result.costs, ElementsAre(1e9));
}

TEST(MeasureResultTest, NonsenseFromTheWireBecomesUnknownForBothMessages) {
  proto::RunResult run_out_of_range;
  run_out_of_range.set_error_no(42);
  EXPECT_EQ(ToMeasureResult(run_out_of_range, 0).error_no, MeasureErrorNo::kUnknown);
  proto::TrialResult trial_out_of_range;
  trial_out_of_range.set_error_no(-3);
  trial_out_of_range.add_costs(1.0);
  EXPECT_EQ(ToMeasureResult(trial_out_of_range).error_no, MeasureErrorNo::kUnknown);
  EXPECT_THAT(ToMeasureResult(trial_out_of_range).costs, ElementsAre(1e9));

  MeasureResult run_without_costs = ToMeasureResult(proto::RunResult(), 0);
  EXPECT_EQ(run_without_costs.error_no, MeasureErrorNo::kUnknown);
  EXPECT_THAT(run_without_costs.error_msg, HasSubstr("success but no costs"));
  EXPECT_THAT(run_without_costs.costs, ElementsAre(1e9));
  MeasureResult trial_without_costs = ToMeasureResult(proto::TrialResult());
  EXPECT_EQ(trial_without_costs.error_no, MeasureErrorNo::kUnknown);
  EXPECT_THAT(trial_without_costs.costs, ElementsAre(1e9));
}

TEST(MeasureResultTest, TrialResultKeepsCostsMessageAllCostAndTimestamp) {
  proto::TrialResult trial;
  trial.add_costs(1e-3);
  trial.add_costs(3e-3);
  trial.set_all_cost(2.5);
  trial.set_timestamp(99.0);
  trial.set_build_seconds(1.0);
  MeasureResult result = ToMeasureResult(trial);
  EXPECT_TRUE(result.ok());
  EXPECT_THAT(result.costs, ElementsAre(1e-3, 3e-3));
  EXPECT_EQ(result.all_cost, 2.5);
  EXPECT_EQ(result.timestamp, 99.0);
}

TEST(MeasureResultTest, TrialResultRoundTripsThroughMeasureResult) {
  MeasureResult measure;
  measure.costs = {1e-3, 2e-3};
  measure.all_cost = 4.0;
  measure.timestamp = 10.0;
  proto::TrialResult trial = ToTrialResult(measure);
  EXPECT_THAT(trial.costs(), ElementsAre(1e-3, 2e-3));
  EXPECT_EQ(trial.error_no(), 0);
  MeasureResult back = ToMeasureResult(trial);
  EXPECT_EQ(back.costs, measure.costs);
  EXPECT_EQ(back.all_cost, measure.all_cost);
  EXPECT_EQ(back.timestamp, measure.timestamp);
}

TEST(MeasureResultTest, AgentRunBecomesAStrictTrialResult) {
  proto::RunResult run;  // success without costs
  run.set_run_seconds(1.5);
  proto::TrialResult trial = ToTrialResult(run, 7.0);
  EXPECT_EQ(trial.error_no(), static_cast<int>(MeasureErrorNo::kUnknown));
  EXPECT_THAT(trial.costs(), ElementsAre(1e9));
  EXPECT_EQ(trial.all_cost(), 1.5);
  EXPECT_EQ(trial.timestamp(), 7.0);
}

TEST(MeasureResultTest, SpreadSurvivesRunToTrialToMeasureResult) {
  proto::RunResult run;
  run.add_costs(1e-3);
  run.set_timed_repeats(12);
  run.set_cost_stddev_s(2e-5);
  run.set_cost_rel_ci(0.015);
  proto::TrialResult trial = ToTrialResult(run, 1.0);
  EXPECT_EQ(trial.timed_repeats(), 12);
  EXPECT_EQ(trial.cost_stddev_s(), 2e-5);
  EXPECT_EQ(trial.cost_rel_ci(), 0.015);
  MeasureResult back = ToMeasureResult(trial);
  EXPECT_EQ(back.timed_repeats, 12);
  EXPECT_EQ(back.cost_stddev_s, 2e-5);
  EXPECT_EQ(back.cost_rel_ci, 0.015);
}

TEST(MeasureResultTest, UnknownSpreadStaysUnset) {
  proto::RunResult run;
  run.add_costs(1e-3);
  run.set_timed_repeats(1);
  MeasureResult result = ToMeasureResult(run, 1.0);
  EXPECT_FALSE(result.cost_stddev_s.has_value());
  EXPECT_FALSE(result.cost_rel_ci.has_value());
  EXPECT_FALSE(ToTrialResult(result).has_cost_rel_ci());
}

TEST(MeasureResultTest, ZeroNegativeOrNonFiniteCostIsAnErrorNamingTheCost) {
  for (double bad : {0.0, -1e-3, std::nan(""), std::numeric_limits<double>::infinity()}) {
    proto::RunResult run;
    run.add_costs(1e-3);
    run.add_costs(bad);
    run.set_cost_rel_ci(0.01);
    MeasureResult result = ToMeasureResult(run, 1.0);
    EXPECT_EQ(result.error_no, kInvalidCostError) << bad;
    EXPECT_THAT(result.error_msg, HasSubstr("cost[1] = ")) << bad;
    EXPECT_THAT(result.costs, ElementsAre(1e9));
    EXPECT_FALSE(result.cost_rel_ci.has_value());
  }
  proto::TrialResult trial;
  trial.add_costs(0.0);
  EXPECT_EQ(ToMeasureResult(trial).error_no, kInvalidCostError);
}

TEST(ValidateCostsTest, RefusesACostFasterThanTheDeviceCouldRun) {
  // 2 GFLOP in 1 us is 2e6 GFLOPS; the bound here is 10000.
  const absl::Status status = ValidateCosts({1e-3, 1e-6}, 2e9, 10000);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("cost[1] = 1e-06 s"));
  EXPECT_THAT(status.message(), HasSubstr("2e+06 GFLOPS"));
  EXPECT_THAT(status.message(), HasSubstr("10000 GFLOPS"));
  EXPECT_TRUE(ValidateCosts({1e-3}, 2e9, 10000).ok());  // 2000 GFLOPS
  EXPECT_TRUE(ValidateCosts({1e-6}, 2e9, 0).ok());      // no bound given
}

TEST(ValidateCostsTest, RejectInvalidCostsTurnsASuccessIntoAnErrorOnlyWhenBad) {
  MeasureResult fast;
  fast.costs = {1e-9};
  fast.cost_stddev_s = 1e-10;
  MeasureResult rejected = RejectInvalidCosts(fast, 2e9, 10000);
  EXPECT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error_no, kInvalidCostError);
  EXPECT_THAT(rejected.error_msg, HasSubstr("invalid measurement: cost[0] = 1e-09 s"));
  EXPECT_THAT(rejected.costs, ElementsAre(1e9));
  EXPECT_FALSE(rejected.cost_stddev_s.has_value());

  MeasureResult plausible;
  plausible.costs = {1e-3};
  EXPECT_TRUE(RejectInvalidCosts(plausible, 2e9, 10000).ok());

  proto::RunResult run;
  run.add_costs(1e-9);
  run = RejectInvalidCosts(std::move(run), 2e9, 10000);
  EXPECT_EQ(run.error_no(), static_cast<int>(kInvalidCostError));
  EXPECT_EQ(run.costs_size(), 0);
  EXPECT_THAT(run.error_msg(), HasSubstr("GFLOPS"));
}

TEST(PlausiblePeakGflopsTest, ScalesWithCoresAndVectorWidth) {
  proto::DeviceInfo avx512;
  avx512.set_cores(16);
  avx512.add_isa_features("avx2");
  avx512.add_isa_features("avx512f");
  EXPECT_DOUBLE_EQ(PlausiblePeakGflops(avx512), 16 * 16 * 2 * 2 * 6.0 * 4);
  proto::DeviceInfo a72;  // RK3399's big cores
  a72.set_cores(2);
  a72.add_isa_features("neon");
  EXPECT_DOUBLE_EQ(PlausiblePeakGflops(a72), 2 * 4 * 2 * 2 * 6.0 * 4);
  proto::DeviceInfo unknown;
  EXPECT_GT(PlausiblePeakGflops(unknown), PlausiblePeakGflops(avx512));
  proto::DeviceInfo gpu = a72;
  gpu.set_gpu_name("NVIDIA H100");
  EXPECT_GE(PlausiblePeakGflops(gpu), 5e6);
}

}  // namespace
}  // namespace tunefleet
