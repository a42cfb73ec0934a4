#include "tuner_core/records/best_so_far.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

MeasureResult Ok(std::vector<double> costs) {
  MeasureResult r;
  r.costs = std::move(costs);
  return r;
}

MeasureResult Failed(MeasureErrorNo error_no) {
  MeasureResult r;
  r.costs = {1e9};
  r.error_no = error_no;
  return r;
}

TEST(BestSoFarTest, EmptyHasNoBest) {
  BestSoFar best;
  EXPECT_FALSE(best.has_best());
  EXPECT_EQ(best.cost_s(), 0);
  EXPECT_EQ(best.position(), -1);
  EXPECT_EQ(best.Gflops(1e9), 0);
}

TEST(BestSoFarTest, KeepsLowestMeanAndItsPosition) {
  BestSoFar best;
  EXPECT_TRUE(best.Offer(Ok({2.0})));
  EXPECT_FALSE(best.Offer(Failed(MeasureErrorNo::kRuntimeDevice)));
  // Costs are stored trimmed (by the time evaluator), so the plain mean is
  // compared: {0.5, 1, 1.5} -> 1. Trimming again would have said 1 too, but
  // {100, 1, 1} below must count its 100 (plain mean 34 > 2), not drop it.
  EXPECT_FALSE(best.Offer(Ok({100, 1, 1})));
  EXPECT_TRUE(best.Offer(Ok({0.5, 1, 1.5})));
  EXPECT_FALSE(best.Offer(Ok({1.5})));
  EXPECT_DOUBLE_EQ(best.cost_s(), 1.0);
  EXPECT_EQ(best.position(), 3);
  EXPECT_EQ(best.results_seen(), 5);
  EXPECT_DOUBLE_EQ(best.Gflops(4e9), 4.0);
}

TEST(BestSoFarTest, TiesKeepTheEarlierResult) {
  BestSoFar best;
  best.Offer(Ok({1.0}));
  EXPECT_FALSE(best.Offer(Ok({1.0})));
  EXPECT_EQ(best.position(), 0);
}

TEST(BestSoFarTest, ErrorsAndNonPositiveCostsNeverBecomeBest) {
  BestSoFar best;
  EXPECT_FALSE(best.Offer(Failed(MeasureErrorNo::kWrongAnswer)));
  EXPECT_FALSE(best.Offer(Ok({0.0})));
  EXPECT_FALSE(best.Offer(Ok({-1.0})));
  EXPECT_FALSE(best.has_best());
  EXPECT_EQ(best.results_seen(), 3);
}

TEST(BestSoFarTest, RestoreThenOfferContinuesCounting) {
  BestSoFar best;
  best.Restore(2.0, 5, 10);
  EXPECT_TRUE(best.has_best());
  EXPECT_FALSE(best.Offer(Ok({3.0})));
  EXPECT_TRUE(best.Offer(Ok({1.0})));
  EXPECT_EQ(best.position(), 11);
}

TEST(GflopsOfTest, ConvertsAndRefusesNonPositiveCost) {
  EXPECT_DOUBLE_EQ(GflopsOf(2e9, 0.5), 4.0);
  EXPECT_EQ(GflopsOf(2e9, 0), 0);
  EXPECT_EQ(GflopsOf(2e9, -1), 0);
}

}  // namespace
}  // namespace tunefleet
