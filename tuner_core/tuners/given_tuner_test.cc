#include "tuner_core/tuners/given_tuner.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/tuners/fake_measurer.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(GivenTunerTest, ProposesExactlyTheGivenConfigsInOrderThenStops) {
  const ConfigSpace space = TileByMrSpace();
  auto tuner = GivenTuner::Create(space, {17, 3, 3, 9, 0}).value();
  tuner->MarkVisited(9);  // measured already
  ASSERT_TRUE(tuner->HasNext());
  EXPECT_THAT(ConfigIndices(tuner->NextBatch(2)), ElementsAre(17, 3));
  EXPECT_THAT(ConfigIndices(tuner->NextBatch(8)), ElementsAre(0));
  EXPECT_FALSE(tuner->HasNext());
  EXPECT_TRUE(tuner->NextBatch(8).empty());
}

TEST(GivenTunerTest, RefusesAnEmptyListAndIndicesOutsideTheSpace) {
  const ConfigSpace space = TileByMrSpace();
  EXPECT_THAT(GivenTuner::Create(space, {}).status().message(), HasSubstr("needs the config"));
  EXPECT_THAT(GivenTuner::Create(space, {2, 18}).status().message(),
              HasSubstr("config index 18 is outside the space (0..17)"));
  EXPECT_THAT(GivenTuner::Create(space, {-1}).status().message(), HasSubstr("index -1"));
}

}  // namespace
}  // namespace tunefleet
