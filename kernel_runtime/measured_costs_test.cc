#include "kernel_runtime/measured_costs.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

TEST(MeasuredCostsTest, TimingOptionsCarryTheAdaptiveSettings) {
  MeasureOptions options;
  options.number = 2;
  options.repeat = 5;
  options.min_repeat_ms = 7;
  options.max_repeat = 50;
  options.target_rel_ci = 0.02;
  const TimeEvaluatorOptions timing = TimingOptions(options);
  EXPECT_EQ(timing.number, 2);
  EXPECT_EQ(timing.repeat, 5);
  EXPECT_EQ(timing.min_repeat_ms, 7);
  EXPECT_EQ(timing.max_repeat, 50);
  EXPECT_EQ(timing.target_rel_ci, 0.02);
}

TEST(MeasuredCostsTest, SetsCostsAndSpreadAndClearsUnknownSpread) {
  TimeEvaluation timed;
  timed.costs = {2e-6, 3e-6};
  timed.timed_repeats = 4;
  timed.spread.stddev_s = 1e-6;
  timed.spread.rel_ci = 0.3;
  proto::RunResult result;
  result.add_costs(9.0);
  SetTimedCosts(timed, &result);
  EXPECT_THAT(result.costs(), ElementsAre(2e-6, 3e-6));
  EXPECT_EQ(result.timed_repeats(), 4);
  EXPECT_EQ(result.cost_stddev_s(), 1e-6);
  EXPECT_EQ(result.cost_rel_ci(), 0.3);

  timed.spread = CostSpread{};
  SetTimedCosts(timed, &result);
  EXPECT_FALSE(result.has_cost_stddev_s());
  EXPECT_FALSE(result.has_cost_rel_ci());
}

}  // namespace
}  // namespace tunefleet
