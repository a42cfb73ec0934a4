#include "proto_convert/measure_result.h"

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

}  // namespace
}  // namespace tunefleet
