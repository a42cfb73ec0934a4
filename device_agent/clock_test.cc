#include "device_agent/clock.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

TEST(FakeClockTest, MovesOnlyWhenAdvancedOrSleptOn) {
  FakeClock clock(100);
  EXPECT_EQ(clock.NowNanos(), 100);
  EXPECT_EQ(clock.NowNanos(), 100);
  clock.AdvanceNanos(50);
  EXPECT_EQ(clock.NowNanos(), 150);
  clock.SleepNanos(1000);
  clock.SleepNanos(0);
  EXPECT_EQ(clock.NowNanos(), 1150);
  EXPECT_THAT(clock.sleeps(), ElementsAre(1000, 0));
}

TEST(SteadyClockTest, NeverGoesBackwards) {
  SteadyClock clock;
  int64_t previous = clock.NowNanos();
  for (int i = 0; i < 1000; ++i) {
    const int64_t now = clock.NowNanos();
    EXPECT_GE(now, previous);
    previous = now;
  }
  clock.SleepNanos(-5);  // returns at once
}

}  // namespace
}  // namespace tunefleet
