#include "tuner_core/tuners/tuner_factory.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/tuners/grid_tuner.h"
#include "tuner_core/tuners/random_tuner.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

ConfigSpace MakeSpace() {
  ConfigSpace space;
  EXPECT_TRUE(space.DefineSplit("tile", 32).ok());
  return space;
}

TEST(TunerFactoryTest, MakesGridAndRandomByName) {
  absl::StatusOr<std::unique_ptr<Tuner>> grid = MakeTuner("grid", MakeSpace(), 0);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_NE(dynamic_cast<GridTuner*>(grid->get()), nullptr);

  absl::StatusOr<std::unique_ptr<Tuner>> random = MakeTuner("random", MakeSpace(), 1);
  ASSERT_TRUE(random.ok()) << random.status();
  EXPECT_NE(dynamic_cast<RandomTuner*>(random->get()), nullptr);
  EXPECT_EQ((*random)->NextBatch(100).size(), 6u);
}

TEST(TunerFactoryTest, UnknownNameIsInvalidArgumentListingKnownNames) {
  absl::StatusOr<std::unique_ptr<Tuner>> tuner = MakeTuner("xgb", MakeSpace(), 0);
  EXPECT_EQ(tuner.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(tuner.status().message()), HasSubstr("'xgb'"));
  EXPECT_THAT(std::string(tuner.status().message()), HasSubstr("grid, random"));
}

}  // namespace
}  // namespace tunefleet
