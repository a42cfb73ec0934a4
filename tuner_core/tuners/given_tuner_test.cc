#include "tuner_core/tuners/given_tuner.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ConfigSpace MakeSpace() {  // 6 x 3 = 18 configs
  ConfigSpace space;
  EXPECT_TRUE(space.DefineSplit("tile", 32).ok());
  EXPECT_TRUE(space.DefineKnob("mr", {4, 6, 8}).ok());
  return space;
}

std::vector<int64_t> Indices(const std::vector<Config>& configs) {
  std::vector<int64_t> out;
  for (const Config& c : configs) out.push_back(c.index());
  return out;
}

TEST(GivenTunerTest, ProposesExactlyTheGivenConfigsInOrderThenStops) {
  const ConfigSpace space = MakeSpace();
  auto tuner = GivenTuner::Create(space, {17, 3, 3, 9, 0}).value();
  tuner->MarkVisited(9);  // measured already
  ASSERT_TRUE(tuner->HasNext());
  EXPECT_THAT(Indices(tuner->NextBatch(2)), ElementsAre(17, 3));
  EXPECT_THAT(Indices(tuner->NextBatch(8)), ElementsAre(0));
  EXPECT_FALSE(tuner->HasNext());
  EXPECT_TRUE(tuner->NextBatch(8).empty());
}

TEST(GivenTunerTest, RefusesAnEmptyListAndIndicesOutsideTheSpace) {
  const ConfigSpace space = MakeSpace();
  EXPECT_THAT(GivenTuner::Create(space, {}).status().message(), HasSubstr("needs the config"));
  EXPECT_THAT(GivenTuner::Create(space, {2, 18}).status().message(),
              HasSubstr("config index 18 is outside the space (0..17)"));
  EXPECT_THAT(GivenTuner::Create(space, {-1}).status().message(), HasSubstr("index -1"));
}

}  // namespace
}  // namespace tunefleet
