#include "tuner_core/tuners/grid_tuner.h"

#include <numeric>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/tuners/fake_measurer.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

TEST(GridTunerTest, VisitsEveryIndexInOrderThenStops) {
  GridTuner tuner(TileByMrSpace());
  std::vector<int64_t> seen;
  while (tuner.HasNext()) {
    std::vector<Config> batch = tuner.NextBatch(5);
    ASSERT_FALSE(batch.empty());
    for (int64_t index : ConfigIndices(batch)) seen.push_back(index);
  }
  std::vector<int64_t> expected(18);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(seen, expected);
  EXPECT_TRUE(tuner.NextBatch(5).empty());
}

TEST(GridTunerTest, LastBatchIsShort) {
  GridTuner tuner(TileByMrSpace());
  EXPECT_EQ(tuner.NextBatch(16).size(), 16u);
  EXPECT_THAT(ConfigIndices(tuner.NextBatch(16)), ElementsAre(16, 17));
}

TEST(GridTunerTest, SkipsIndicesMarkedVisited) {
  GridTuner tuner(TileByMrSpace());
  for (int64_t index : {0, 1, 5, 17, 99, -3}) tuner.MarkVisited(index);  // 99, -3 ignored
  std::vector<int64_t> seen;
  while (tuner.HasNext()) {
    for (int64_t index : ConfigIndices(tuner.NextBatch(4))) seen.push_back(index);
  }
  EXPECT_THAT(seen, ElementsAre(2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16));
}

TEST(GridTunerTest, TuneMeasuresTheWholeSpaceOnce) {
  GridTuner tuner(TileByMrSpace());
  FakeMeasurer measurer([](const Config&) { return FakeCost(1e-3); });
  TuneOptions options;
  options.n_trial = 100;
  options.show_progress = false;
  ASSERT_TRUE(tuner.Tune(measurer, options).ok());
  std::vector<int64_t> expected(18);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(measurer.measured_indices(), expected);
}

}  // namespace
}  // namespace tunefleet
