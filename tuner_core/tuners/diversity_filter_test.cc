#include "tuner_core/tuners/diversity_filter.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

TEST(DiversityFilterTest, PrefersNewKnobValuesOverNearCopies) {
  // Candidate 1 is a near-copy of 0 with almost its score; 2 differs in both knobs.
  EXPECT_THAT(DiversePick({1.0f, 0.99f, 0.5f}, {{0, 0}, {0, 0}, {1, 1}}, 2), ElementsAre(0, 2));
  // Without the knob bonus the scores decide.
  EXPECT_THAT(DiversePick({1.0f, 0.99f, 0.5f}, {{0, 0}, {0, 0}, {1, 1}}, 2, 0.0),
              ElementsAre(0, 1));
}

TEST(DiversityFilterTest, PicksAtMostTheCandidates) {
  EXPECT_THAT(DiversePick({0.1f, 0.2f}, {{0}, {1}}, 5), ElementsAre(1, 0));
  EXPECT_TRUE(DiversePick({}, {}, 3).empty());
}

}  // namespace
}  // namespace tunefleet
