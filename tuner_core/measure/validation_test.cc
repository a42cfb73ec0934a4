#include "tuner_core/measure/validation.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

MeasureResult Pass(std::vector<double> costs, int timed = 0, std::optional<double> ci = {}) {
  MeasureResult r;
  r.costs = std::move(costs);
  r.timed_repeats = timed;
  r.cost_rel_ci = ci;
  return r;
}

TEST(ValidationMeasureOptionsTest, MoreRepeatsAdaptiveNoCheckAndStillValid) {
  MeasureOptions search;  // number 4, repeat 3, timeout 10
  MeasureOptions v = ValidationMeasureOptions(search);
  EXPECT_EQ(v.number, 4);
  EXPECT_EQ(v.repeat, 6);
  EXPECT_EQ(v.max_repeat, 18);
  EXPECT_DOUBLE_EQ(v.target_rel_ci, kValidationTargetRelCi);
  EXPECT_DOUBLE_EQ(v.timeout_s, 60.0);  // 18 of 3 repeats
  EXPECT_FALSE(v.check_correctness);
  EXPECT_TRUE(v.Validate().ok()) << v.Validate();

  search.repeat = 10;
  search.max_repeat = 100;
  search.target_rel_ci = 0.005;
  search.timeout_s = 500;
  v = ValidationMeasureOptions(search);
  EXPECT_EQ(v.repeat, 20);
  EXPECT_EQ(v.max_repeat, 100);
  EXPECT_DOUBLE_EQ(v.target_rel_ci, 0.005);  // the tighter of the two
  EXPECT_DOUBLE_EQ(v.timeout_s, 500);        // no more repeats than the search's cap
  EXPECT_TRUE(v.Validate().ok()) << v.Validate();

  search = MeasureOptions{};
  search.timeout_s = 400;
  EXPECT_DOUBLE_EQ(ValidationMeasureOptions(search).timeout_s, kMaxMeasureTimeoutS);
}

TEST(TopKByCostTest, CheapestFirstSkippingFailuresAndTies) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(TopKByCost({3, 1, 0, 2, 1, inf, -1, std::nan("")}, 3), ElementsAre(1, 4, 3));
  EXPECT_THAT(TopKByCost({3, 1}, 5), ElementsAre(1, 0));
  EXPECT_THAT(TopKByCost({3, 1}, 0), ElementsAre());
  EXPECT_THAT(TopKByCost({}, 5), ElementsAre());
}

TEST(ValidationOrderTest, InterleavesForwardThenBackward) {
  EXPECT_THAT(ValidationOrder(3, 3),
              ElementsAre(Pair(0, 0), Pair(1, 0), Pair(2, 0), Pair(2, 1), Pair(1, 1), Pair(0, 1),
                          Pair(0, 2), Pair(1, 2), Pair(2, 2)));
  EXPECT_THAT(ValidationOrder(0, 3), ElementsAre());
  EXPECT_THAT(ValidationOrder(2, 1), ElementsAre(Pair(0, 0), Pair(1, 0)));
}

TEST(ValidationTest, MedianOfPassMeansSpreadAndFailures) {
  Validation v;
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.cost_s(), 0);
  v.Add(Pass({1.0, 3.0}, 8, 0.02));  // mean 2
  v.Add(Pass({4.0}, 6, 0.01));
  MeasureResult failed = Pass({1e9});
  failed.error_no = MeasureErrorNo::kRuntimeDevice;
  v.Add(failed);
  v.Add(Pass({2.5}, 6));
  EXPECT_TRUE(v.ok());
  EXPECT_EQ(v.failed_passes, 1);
  EXPECT_EQ(v.timed_repeats, 20);
  EXPECT_THAT(v.pass_costs, ElementsAre(2.0, 4.0, 2.5));
  EXPECT_DOUBLE_EQ(v.cost_s(), 2.5);  // median, not the luckiest pass
  EXPECT_DOUBLE_EQ(v.rel_spread(), 2.0 / 2.5);
  EXPECT_DOUBLE_EQ(*v.max_rel_ci, 0.02);
  v.Add(Pass({3.0}));
  EXPECT_DOUBLE_EQ(v.cost_s(), 2.75);  // even count: mean of the middle two
}

TEST(BestValidatedTest, LowestValidatedCostAmongSuccessful) {
  std::vector<Validation> vs(3);
  EXPECT_EQ(BestValidated(vs), std::nullopt);
  vs[0].Add(Pass({2.0}));
  vs[2].Add(Pass({1.0}));
  vs[2].Add(Pass({3.0}));
  vs[2].Add(Pass({1.5}));  // median 1.5
  EXPECT_EQ(BestValidated(vs), 2);
  vs[0].pass_costs = {1.5};
  EXPECT_EQ(BestValidated(vs), 0);  // tie: lower index
}

}  // namespace
}  // namespace tunefleet
