#include "common/median.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(MedianTest, MiddleOfAnOddCount) { EXPECT_DOUBLE_EQ(Median({3.4, 2.9, 3.1}), 3.1); }

TEST(MedianTest, MeanOfTheMiddleTwoOfAnEvenCount) {
  EXPECT_DOUBLE_EQ(Median({4.0, 1.0, 3.0, 2.0}), 2.5);
}

TEST(MedianTest, EmptyIsZero) { EXPECT_DOUBLE_EQ(Median({}), 0.0); }

}  // namespace
}  // namespace tunefleet
