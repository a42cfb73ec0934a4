#include "common/clock.h"

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

TEST(FakeClockTest, WallTimeMovesWithTheMonotonicTime) {
  FakeClock clock(/*start_nanos=*/5'000'000'000, /*wall_start_nanos=*/1'600'000'000'000'000'000);
  EXPECT_DOUBLE_EQ(clock.NowSeconds(), 5.0);
  EXPECT_DOUBLE_EQ(clock.WallSeconds(), 1.6e9);
  clock.AdvanceSeconds(2.5);
  clock.SleepSeconds(0.5);
  EXPECT_DOUBLE_EQ(clock.NowSeconds(), 8.0);
  EXPECT_DOUBLE_EQ(clock.WallSeconds(), 1.6e9 + 3.0);
  EXPECT_THAT(clock.sleeps(), ElementsAre(500'000'000));
}

TEST(FakeClockTest, DefaultWallTimeIsAPlausibleUnixTime) {
  FakeClock clock;
  EXPECT_DOUBLE_EQ(clock.WallSeconds(), 1.7e9);
}

TEST(RealClockTest, MonotonicTimeNeverGoesBackwards) {
  RealClock clock;
  int64_t previous = clock.NowNanos();
  for (int i = 0; i < 1000; ++i) {
    const int64_t now = clock.NowNanos();
    EXPECT_GE(now, previous);
    previous = now;
  }
  clock.SleepNanos(-5);  // returns at once
}

TEST(RealClockTest, WallTimeIsAfter2020) {
  RealClock clock;
  EXPECT_GT(clock.WallSeconds(), 1.577e9);  // 2020-01-01
}

TEST(StopwatchTest, MeasuresOnItsClockAndRestarts) {
  FakeClock clock(1'000'000'000);
  Stopwatch watch(clock);
  EXPECT_EQ(watch.ElapsedSeconds(), 0.0);
  clock.AdvanceSeconds(2.5);
  EXPECT_DOUBLE_EQ(watch.ElapsedSeconds(), 2.5);
  watch.Restart();
  clock.AdvanceSeconds(0.25);
  EXPECT_DOUBLE_EQ(watch.ElapsedSeconds(), 0.25);
}

TEST(SystemClockTest, IsOneRealClock) {
  EXPECT_EQ(&SystemClock(), &SystemClock());
  EXPECT_GT(SystemClock().WallSeconds(), 1.577e9);
}

}  // namespace
}  // namespace tunefleet
