#include "tuner_core/tuners/ranking_weights.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

constexpr int kSamples = 32;

// measured = 0..n-1; a model that predicts the same order, one that
// predicts the reverse, one that is right on half the points.
std::vector<double> Measured(int n) {
  std::vector<double> m;
  for (int i = 0; i < n; ++i) m.push_back(i);
  return m;
}

TEST(RankingWeightsTest, AModelThatOrdersRightTakesTheWeight) {
  const std::vector<double> measured = Measured(40);
  std::vector<float> right, reversed, noisy;
  for (int i = 0; i < 40; ++i) {
    right.push_back(static_cast<float>(2 * i + 7));  // other scale, same order
    reversed.push_back(static_cast<float>(-i));
    noisy.push_back(static_cast<float>(i % 2 == 0 ? i : 40 - i));
  }
  const RankingWeightsResult r = RankingWeights({reversed, right, noisy}, measured, kSamples, 1);
  ASSERT_EQ(r.weights.size(), 3u);
  EXPECT_EQ(r.pairs, 40 * 39 / 2);
  EXPECT_DOUBLE_EQ(r.accuracy[1], 1.0);
  EXPECT_DOUBLE_EQ(r.accuracy[0], 0.0);
  EXPECT_GT(r.accuracy[2], 0.4);
  EXPECT_LT(r.accuracy[2], 0.8);
  EXPECT_DOUBLE_EQ(r.weights[0], 0.0);  // worse than chance: never trusted
  EXPECT_DOUBLE_EQ(r.weights[1], 1.0);  // fewest mistakes in every resample
  EXPECT_DOUBLE_EQ(r.weights[2], 0.0);
}

TEST(RankingWeightsTest, CloseModelsShareTheWeightAndItSumsToOne) {
  const std::vector<double> measured = Measured(30);
  std::vector<float> a, b;
  for (int i = 0; i < 30; ++i) {
    // Each swaps a different few neighbours: about equally good.
    a.push_back(static_cast<float>(i % 6 == 0 && i + 1 < 30 ? i + 1.5 : i));
    b.push_back(static_cast<float>(i % 6 == 3 && i + 1 < 30 ? i + 1.5 : i));
  }
  const RankingWeightsResult r = RankingWeights({a, b}, measured, kSamples, 7);
  EXPECT_GT(r.weights[0], 0.1);
  EXPECT_GT(r.weights[1], 0.1);
  EXPECT_NEAR(r.weights[0] + r.weights[1], 1.0, 1e-12);
}

TEST(RankingWeightsTest, NoModelBetterThanChanceGivesNoWeight) {
  const std::vector<double> measured = Measured(20);
  std::vector<float> reversed, flat(20, 1.0f);
  for (int i = 0; i < 20; ++i) reversed.push_back(static_cast<float>(20 - i));
  const RankingWeightsResult r = RankingWeights({reversed, flat}, measured, kSamples, 3);
  EXPECT_DOUBLE_EQ(r.accuracy[1], 0.5);  // all ties: half a mistake per pair
  EXPECT_DOUBLE_EQ(r.weights[0], 0.0);
  EXPECT_DOUBLE_EQ(r.weights[1], 0.0);
}

TEST(RankingWeightsTest, WithoutEvidenceTheWeightsAreEqual) {
  const std::vector<double> measured(5, 2.0);  // one value: no ordered pair
  const RankingWeightsResult r =
      RankingWeights({{1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}}, measured, kSamples, 3);
  EXPECT_EQ(r.pairs, 0);
  EXPECT_DOUBLE_EQ(r.weights[0], 0.5);
  EXPECT_DOUBLE_EQ(r.weights[1], 0.5);
  const RankingWeightsResult none = RankingWeights({}, measured, kSamples, 3);
  EXPECT_TRUE(none.weights.empty());
}

TEST(RankingWeightsTest, ManyPointsUseASubsetAndReplayForASeed) {
  const int n = 1000;
  const std::vector<double> measured = Measured(n);
  std::vector<float> good, bad;
  for (int i = 0; i < n; ++i) {
    good.push_back(static_cast<float>(i + (i % 10) * 30));  // mostly right
    bad.push_back(static_cast<float>((i * 7919) % n));      // scrambled
  }
  const RankingWeightsResult r =
      RankingWeights({bad, good}, measured, kSamples, 11, /*max_points=*/100);
  EXPECT_LE(r.pairs, 100 * 99 / 2);
  EXPECT_GT(r.weights[1], 0.99);
  const RankingWeightsResult again = RankingWeights({bad, good}, measured, kSamples, 11, 100);
  EXPECT_EQ(again.weights, r.weights);
  EXPECT_EQ(again.accuracy, r.accuracy);
}

}  // namespace
}  // namespace tunefleet
