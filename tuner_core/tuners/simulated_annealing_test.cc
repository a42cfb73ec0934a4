#include "tuner_core/tuners/simulated_annealing.h"

#include <algorithm>

#include "gtest/gtest.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {
namespace {

// 8^6 = 262,144 points; the score peaks at digits (5, 2, 7, 1, 4, 6).
const std::vector<int64_t> kDims = {8, 8, 8, 8, 8, 8};
const std::vector<int64_t> kPeak = {5, 2, 7, 1, 4, 6};

float Score(int64_t index) {
  const std::vector<int64_t> p = IndexToPoint(index, kDims);
  float s = 0;
  for (size_t i = 0; i < p.size(); ++i)
    s -= static_cast<float>((p[i] - kPeak[i]) * (p[i] - kPeak[i]));
  return s;
}

[[nodiscard]] absl::StatusOr<std::vector<float>> ScoreAll(const std::vector<int64_t>& indices) {
  std::vector<float> out;
  for (int64_t i : indices) out.push_back(Score(i));
  return out;
}

TEST(SimulatedAnnealingTest, FindsTheMaximumOfAKnownFunction) {
  SimulatedAnnealing sa(kDims, {});
  std::mt19937_64 engine(1);
  auto best = sa.FindMaximums(ScoreAll, 10, [](int64_t) { return false; }, engine);
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_EQ(best->size(), 10u);
  EXPECT_EQ((*best)[0], PointToIndex(kPeak, kDims));
  for (size_t i = 1; i < best->size(); ++i) EXPECT_GE(Score((*best)[i - 1]), Score((*best)[i]));
  // Nine points at distance 1 score -1; the runner-ups are among them.
  EXPECT_EQ(Score((*best)[1]), -1.0f);
  EXPECT_GT(sa.last_steps(), 0);
}

TEST(SimulatedAnnealingTest, SeededChainsStartAtTheSeedsOnce) {
  SimulatedAnnealingOptions options;
  options.n_iter = 0;  // score the starting points only
  options.parallel_size = 4;
  options.persistent = false;
  SimulatedAnnealing sa(kDims, options);
  std::mt19937_64 engine(3);
  const int64_t peak = PointToIndex(kPeak, kDims);
  sa.SeedPoints({-5, peak, 1LL << 40});  // out-of-space seeds are dropped
  auto best = sa.FindMaximums(ScoreAll, 1, [](int64_t) { return false; }, engine);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(*best, std::vector<int64_t>{peak});
  auto again = sa.FindMaximums(ScoreAll, 1, [](int64_t) { return false; }, engine);
  ASSERT_TRUE(again.ok());
  EXPECT_NE(*again, std::vector<int64_t>{peak});  // 4 random starts, no steps
}

TEST(SimulatedAnnealingTest, NeverReturnsExcludedPoints) {
  SimulatedAnnealing sa(kDims, {});
  std::mt19937_64 engine(2);
  const int64_t peak = PointToIndex(kPeak, kDims);
  auto best = sa.FindMaximums(ScoreAll, 5, [&](int64_t i) { return i == peak; }, engine);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(std::count(best->begin(), best->end(), peak), 0);
  EXPECT_EQ(Score((*best)[0]), -1.0f);
}

TEST(SimulatedAnnealingTest, SameSeedSameAnswer) {
  SimulatedAnnealingOptions options;
  options.n_iter = 40;
  options.parallel_size = 16;
  SimulatedAnnealing a(kDims, options), b(kDims, options);
  std::mt19937_64 ea(9), eb(9);
  auto none = [](int64_t) { return false; };
  EXPECT_EQ(*a.FindMaximums(ScoreAll, 20, none, ea), *b.FindMaximums(ScoreAll, 20, none, eb));
  // Persistent chains: the second run continues, still deterministic.
  EXPECT_EQ(*a.FindMaximums(ScoreAll, 20, none, ea), *b.FindMaximums(ScoreAll, 20, none, eb));
}

TEST(SimulatedAnnealingTest, SmallSpaceReturnsAtMostItsDistinctPoints) {
  SimulatedAnnealing sa({2, 2}, {});
  std::mt19937_64 engine(3);
  auto best = sa.FindMaximums([](const std::vector<int64_t>& i) { return ScoreAll(i); }, 10,
                              [](int64_t i) { return i == 0; }, engine);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->size(), 3u);
}

TEST(SimulatedAnnealingTest, BadInputsAndScoreErrorsAreStatuses) {
  SimulatedAnnealingOptions bad;
  bad.parallel_size = 0;
  std::mt19937_64 engine(4);
  auto none = [](int64_t) { return false; };
  SimulatedAnnealing bad_sa(kDims, bad);
  EXPECT_EQ(bad_sa.FindMaximums(ScoreAll, 3, none, engine).status().code(),
            absl::StatusCode::kInvalidArgument);
  SimulatedAnnealing sa(kDims, {});
  EXPECT_EQ(sa.FindMaximums(ScoreAll, -1, none, engine).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto failing = [](const std::vector<int64_t>&) -> absl::StatusOr<std::vector<float>> {
    return absl::InternalError("model broke");
  };
  EXPECT_EQ(sa.FindMaximums(failing, 3, none, engine).status().code(), absl::StatusCode::kInternal);
  auto short_scores = [](const std::vector<int64_t>&) -> absl::StatusOr<std::vector<float>> {
    return std::vector<float>{1.0f};
  };
  EXPECT_EQ(sa.FindMaximums(short_scores, 3, none, engine).status().code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace tunefleet
