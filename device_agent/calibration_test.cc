#include "device_agent/calibration.h"

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

TEST(CalibrationTest, MeasuresAPositiveThroughputAndItsSpread) {
  RealClock clock;
  CalibrationOptions options;
  options.repeat = 5;
  options.min_repeat_ms = 2;
  absl::StatusOr<CalibrationFigures> figures = RunCalibration(options, clock);
  ASSERT_TRUE(figures.ok()) << figures.status();
  EXPECT_GT(figures->gflops, 0.01);
  // No CPU of this decade does more than 10 TFLOPS of scalar-vector work on
  // one thread: a larger figure would mean the work was optimised away.
  EXPECT_LT(figures->gflops, 10000);
  EXPECT_GE(figures->noise, 0);
  EXPECT_EQ(figures->repeats, 5);
}

TEST(CalibrationTest, FakeClockGivesTheExactThroughput) {
  // A clock that moves 1 ms per reading: every repeat (one call between two
  // readings) lasts 1 ms, so the figure is the kernel's FLOPs per
  // millisecond and the spread is 0.
  class TickingClock final : public ClockInterface {
   public:
    int64_t NowNanos() override { return now_ += 1'000'000; }
    int64_t WallNanos() override { return now_; }
    void SleepNanos(int64_t nanos) override { now_ += nanos; }

   private:
    int64_t now_ = 0;
  };
  TickingClock clock;
  CalibrationOptions options;
  options.repeat = 4;
  options.min_repeat_ms = 1;
  absl::StatusOr<CalibrationFigures> figures = RunCalibration(options, clock);
  ASSERT_TRUE(figures.ok()) << figures.status();
  EXPECT_NEAR(figures->gflops, CalibrationKernelFlops() / 1e-3 / 1e9, 1e-9);
  EXPECT_NEAR(figures->noise, 0, 1e-12);
}

TEST(CalibrationTest, RefusesOptionsThatCannotGiveASpread) {
  RealClock clock;
  CalibrationOptions options;
  options.repeat = 2;
  EXPECT_THAT(RunCalibration(options, clock).status().message(), HasSubstr("repeat must be >= 3"));
  options.repeat = 5;
  options.min_repeat_ms = 0;
  EXPECT_THAT(RunCalibration(options, clock).status().message(), HasSubstr("min_repeat_ms"));
}

}  // namespace
}  // namespace tunefleet
