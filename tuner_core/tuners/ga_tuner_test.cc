#include "tuner_core/tuners/ga_tuner.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "tuner_core/tuners/fake_measurer.h"
#include "tuner_core/tuners/search_util.h"

namespace tunefleet {
namespace {

// 10^4 configs; the fastest has digits (7, 3, 8, 2).
ConfigSpace Space() {
  ConfigSpace space;
  for (const char* name : {"a", "b", "c", "d"}) {
    EXPECT_TRUE(space.DefineKnob(name, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).ok());
  }
  return space;
}

double Cost(const Config& config) {
  const std::vector<int64_t> p = config.choice_indices();
  const int64_t peak[4] = {7, 3, 8, 2};
  double d = 0;
  for (int i = 0; i < 4; ++i) d += std::abs(p[i] - peak[i]);
  return 1e-3 * (1 + d);
}

TEST(GaTunerTest, BadOptionsAreInvalidArgument) {
  GaTunerOptions options;
  options.pop_size = 1;
  EXPECT_EQ(GaTuner::Create(Space(), options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.elite_num = 101;
  EXPECT_EQ(GaTuner::Create(Space(), options).status().code(), absl::StatusCode::kInvalidArgument);
  options = {};
  options.mutation_prob = 1.5;
  EXPECT_EQ(GaTuner::Create(Space(), options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GaTunerTest, KeepsTheBestConfigsSeenAsElites) {
  GaTunerOptions options;
  options.pop_size = 20;
  options.elite_num = 3;
  auto tuner = GaTuner::Create(Space(), options);
  ASSERT_TRUE(tuner.ok());
  absl::flat_hash_map<int64_t, double> measured;
  FakeMeasurer measurer([&](const Config& config) {
    measured[config.index()] = Cost(config);
    return FakeCost(Cost(config));
  });
  ASSERT_TRUE((*tuner)->Tune(measurer, QuietTuneOptions(200, 10)).ok());
  EXPECT_GE((*tuner)->generation(), 9);
  // Breeding the next generation folds in the last results: the first elite
  // is then the fastest config measured, and the others the next fastest.
  ASSERT_EQ((*tuner)->NextBatch(1).size(), 1u);
  ASSERT_EQ((*tuner)->elites().size(), 3u);
  std::vector<double> costs;
  for (const auto& [index, cost] : measured) costs.push_back(cost);
  std::sort(costs.begin(), costs.end());
  for (size_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(1.0 / (*tuner)->elites()[i].second, costs[i]);
  for (size_t i = 1; i < 3; ++i)
    EXPECT_GE((*tuner)->elites()[i - 1].second, (*tuner)->elites()[i].second);
}

TEST(GaTunerTest, ConvergesTowardsTheOptimumFasterThanChance) {
  // Top 1% of the space is distance <= 2 from the peak (~ 1.1% of configs).
  int hits = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    GaTunerOptions options;
    options.pop_size = 40;
    options.seed = seed;
    auto tuner = GaTuner::Create(Space(), options);
    FakeMeasurer measurer([](const Config& config) { return FakeCost(Cost(config)); });
    ASSERT_TRUE((*tuner)->Tune(measurer, QuietTuneOptions(400, 8)).ok());
    if (Cost(*(*tuner)->best_config()) <= 1e-3 * (1 + 1)) ++hits;
  }
  EXPECT_GE(hits, 2);
}

TEST(GaTunerTest, SeededRunIsReplayable) {
  auto run = [](uint64_t seed) {
    GaTunerOptions options;
    options.pop_size = 16;
    options.seed = seed;
    auto tuner = GaTuner::Create(Space(), options);
    FakeMeasurer measurer([](const Config& config) { return FakeCost(Cost(config)); });
    EXPECT_TRUE((*tuner)->Tune(measurer, QuietTuneOptions(100, 7)).ok());
    return measurer.measured_indices();
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

TEST(GaTunerTest, AsynchronousUseNeverRepeatsAndNeverWaitsForResults) {
  GaTunerOptions options;
  options.pop_size = 10;
  auto tuner = GaTuner::Create(Space(), options);
  ASSERT_TRUE(tuner.ok());
  (*tuner)->MarkVisited(0);
  absl::flat_hash_set<int64_t> proposed;
  std::vector<Config> in_flight;
  for (int round = 0; round < 60; ++round) {
    // Slots free up one or two at a time; results come back late and reordered.
    std::vector<Config> batch = (*tuner)->NextBatch(1 + round % 2);
    ASSERT_FALSE(batch.empty());
    for (Config& c : batch) {
      EXPECT_TRUE(proposed.insert(c.index()).second) << "proposed twice: " << c.index();
      EXPECT_NE(c.index(), 0);
      in_flight.push_back(std::move(c));
    }
    if (in_flight.size() > 4) {
      std::vector<TrialResult> done = {{in_flight[1], FakeCost(Cost(in_flight[1]))}};
      in_flight.erase(in_flight.begin() + 1);
      (*tuner)->Update(done);
    }
  }
  EXPECT_GE((*tuner)->generation(), 8);
}

TEST(GaTunerTest, DrainsASmallSpaceExactlyOnce) {
  ConfigSpace space;
  ASSERT_TRUE(space.DefineKnob("x", {1, 2, 3, 4, 5, 6, 7}).ok());
  GaTunerOptions options;
  options.pop_size = 4;
  auto tuner = GaTuner::Create(space, options);
  FakeMeasurer measurer([](const Config& config) { return FakeCost(1.0 / (1 + config.index())); });
  ASSERT_TRUE((*tuner)->Tune(measurer, QuietTuneOptions(100, 3)).ok());
  std::vector<int64_t> seen = measurer.measured_indices();
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE((*tuner)->HasNext());
}

}  // namespace
}  // namespace tunefleet
