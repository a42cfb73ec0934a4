#include "kernel_runtime/time_evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kMillis = 1'000'000;

// A pretend kernel: each call advances the fake clock by `nanos_per_call`
// and counts itself.
struct FakeKernel {
  FakeClock* clock;
  int64_t nanos_per_call;
  int calls = 0;

  std::function<int32_t()> AsRunOnce() {
    return [this] {
      ++calls;
      clock->AdvanceNanos(nanos_per_call);
      return 0;
    };
  }
};

TEST(TimeEvaluatorTest, FixedNumberWhenMinRepeatIsZero) {
  FakeClock clock;
  FakeKernel kernel{&clock, 2000};
  auto timed =
      EvaluateTime(kernel.AsRunOnce(), {.number = 4, .repeat = 3, .min_repeat_ms = 0}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  // Three repeats timed, min and max dropped: one cost stored.
  EXPECT_THAT(timed->costs, ElementsAre(DoubleEq(2e-6)));
  EXPECT_EQ(timed->timed_repeats, 3);
  EXPECT_EQ(kernel.calls, 1 + 3 * 4);  // warm-up + repeat * number
  // No cooldown inside the evaluator (the runner child sleeps once per trial).
  EXPECT_TRUE(clock.sleeps().empty());
}

TEST(TimeEvaluatorTest, NumberJumpsToReachMinRepeatMs) {
  FakeClock clock;
  FakeKernel kernel{&clock, 1 * kMillis};
  auto timed =
      EvaluateTime(kernel.AsRunOnce(), {.number = 1, .repeat = 3, .min_repeat_ms = 10}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_THAT(timed->costs, ElementsAre(DoubleEq(1e-3)));
  // Repeat 1: 1 call lasts 1 ms < 10 ms, so number = max(10 / 1 + 1, 1.618)
  // = 11, and 11 calls last 11 ms. Repeats 2 and 3 start at number = 11.
  EXPECT_EQ(kernel.calls, 1 + (1 + 11) + 11 + 11);
}

TEST(TimeEvaluatorTest, NumberGrowsByGoldenRatioWhenThatIsMore) {
  FakeClock clock;
  FakeKernel kernel{&clock, 1 * kMillis};
  auto timed =
      EvaluateTime(kernel.AsRunOnce(), {.number = 8, .repeat = 3, .min_repeat_ms = 10}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  // 8 calls last 8 ms < 10 ms: number = int(max(10 / 1 + 1, 8 * 1.618 = 12.94)) = 12.
  EXPECT_EQ(kernel.calls, 1 + (8 + 12) + 12 + 12);
  EXPECT_THAT(timed->costs, ElementsAre(DoubleEq(1e-3)));
}

TEST(TimeEvaluatorTest, GrowsSeveralTimesWhenTheKernelSpeedsUp) {
  // The first timed calls are slow and later ones fast (e.g. a frequency
  // ramp): growth is recomputed from each measured duration.
  FakeClock clock;
  int calls = 0;
  auto run_once = [&]() -> int32_t {
    ++calls;
    clock.AdvanceNanos(calls <= 2 ? 2 * kMillis : kMillis / 10);
    return 0;
  };
  auto timed = EvaluateTime(run_once, {.number = 2, .repeat = 1, .min_repeat_ms = 5}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  // warm-up (2 ms); 2 calls: 2 + 0.1 = 2.1 ms -> number = int(max(5 / 1.05 + 1, 3.236)) = 5;
  // 5 calls: 0.5 ms -> number = int(max(5 / 0.1 + 1, 8.09)) = 51; 51 calls: 5.1 ms, done.
  EXPECT_EQ(calls, 1 + 2 + 5 + 51);
  EXPECT_THAT(timed->costs, ElementsAre(DoubleEq(5.1e-3 / 51)));
}

TEST(TimeEvaluatorTest, StopsGrowingWhenTheClockNeverMoves) {
  FakeClock clock;
  FakeKernel kernel{&clock, 0};
  auto timed = EvaluateTime(
      kernel.AsRunOnce(),
      {.number = 4, .repeat = 2, .min_repeat_ms = 1, .limit_zero_time_iterations = 100}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_THAT(timed->costs, ElementsAre(0.0, 0.0));
  EXPECT_EQ(kernel.calls, 1 + 2 * 100 * 4);
}

TEST(TimeEvaluatorTest, BeforeRepeatRunsBeforeEachRepeatOutsideTheTimedRegion) {
  FakeClock clock;
  FakeKernel kernel{&clock, 1000};
  std::vector<int> calls_seen_by_hook;
  TimeEvaluatorOptions options{.number = 4, .repeat = 3};
  options.before_repeat = [&] {
    calls_seen_by_hook.push_back(kernel.calls);
    clock.AdvanceNanos(1 * kMillis);  // a slow flush must not count
  };
  auto timed = EvaluateTime(kernel.AsRunOnce(), options, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_THAT(calls_seen_by_hook, ElementsAre(1, 5, 9));
  EXPECT_THAT(timed->costs, ElementsAre(DoubleEq(1e-6)));
}

TEST(TimeEvaluatorTest, KernelFailureDuringWarmUpIsAnError) {
  FakeClock clock;
  auto timed = EvaluateTime([] { return 3; }, {}, clock);
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(timed.status().message(), HasSubstr("kernel returned 3 during the warm-up call"));
}

TEST(TimeEvaluatorTest, KernelFailureDuringARepeatNamesTheCall) {
  FakeClock clock;
  int calls = 0;
  auto timed =
      EvaluateTime([&] { return ++calls == 7 ? 1 : 0; }, {.number = 4, .repeat = 3}, clock);
  ASSERT_FALSE(timed.ok());
  // Call 7 = warm-up + 4 calls of repeat 1 + call 2 of repeat 2.
  EXPECT_THAT(timed.status().message(), HasSubstr("during repeat 2 of 3, call 2"));
}

TEST(TimeEvaluatorTest, RejectsBadOptions) {
  FakeClock clock;
  auto never = []() -> int32_t {
    ADD_FAILURE() << "kernel ran despite bad options";
    return 0;
  };
  EXPECT_EQ(EvaluateTime(never, {.number = 0}, clock).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateTime(never, {.repeat = 0}, clock).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateTime(never, {.min_repeat_ms = -1}, clock).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateTime(never, {.repeat = 3, .max_repeat = 2}, clock).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateTime(never, {.target_rel_ci = -0.5}, clock).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TimeEvaluatorTest, RealClockGivesPositiveCosts) {
  RealClock clock;
  volatile double sink = 0;
  auto timed = EvaluateTime(
      [&]() -> int32_t {
        for (int i = 0; i < 1000; ++i) sink = sink + i;
        return 0;
      },
      {.number = 10, .repeat = 4}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  ASSERT_EQ(timed->costs.size(), 2u);
  for (double cost : timed->costs) EXPECT_GT(cost, 0.0);
}

// A kernel whose repeats take the given durations in turn (one call per
// repeat, number = 1), then repeat the last one.
std::function<int32_t()> RepeatDurations(FakeClock* clock, std::vector<int64_t> nanos, int* calls) {
  return [clock, nanos = std::move(nanos), calls]() -> int32_t {
    const int index = *calls == 0 ? 0 : *calls - 1;  // the warm-up reuses the first
    ++*calls;
    clock->AdvanceNanos(nanos[std::min<size_t>(index, nanos.size() - 1)]);
    return 0;
  };
}

TEST(TimeEvaluatorTest, TrimsMinAndMaxOnceAndKeepsTheRestSorted) {
  FakeClock clock;
  int calls = 0;
  auto timed = EvaluateTime(RepeatDurations(&clock, {5000, 1000, 9000, 2000, 3000}, &calls),
                            {.number = 1, .repeat = 5}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  // Raw {5, 1, 9, 2, 3} us: AutoTVM's run_through_rpc keeps {2, 3, 5}.
  EXPECT_THAT(timed->costs, ElementsAre(DoubleEq(2e-6), DoubleEq(3e-6), DoubleEq(5e-6)));
  EXPECT_EQ(timed->timed_repeats, 5);
}

TEST(TimeEvaluatorTest, TwoRepeatsAreNotTrimmed) {
  FakeClock clock;
  int calls = 0;
  auto timed = EvaluateTime(RepeatDurations(&clock, {1000, 3000}, &calls),
                            {.number = 1, .repeat = 2}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_THAT(timed->costs, ElementsAre(DoubleEq(1e-6), DoubleEq(3e-6)));
}

TEST(TimeEvaluatorTest, ReportsTheSpreadOfTheTimedRepeats) {
  FakeClock clock;
  int calls = 0;
  auto timed = EvaluateTime(RepeatDurations(&clock, {1000, 3000}, &calls),
                            {.number = 1, .repeat = 2}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  // {1, 3} us: stddev sqrt(2) us; CI half-width t(1) * sqrt(2) / sqrt(2) = 12.706 us
  // around a mean of 2 us.
  ASSERT_TRUE(timed->spread.stddev_s.has_value());
  EXPECT_NEAR(*timed->spread.stddev_s, std::sqrt(2.0) * 1e-6, 1e-12);
  ASSERT_TRUE(timed->spread.rel_ci.has_value());
  EXPECT_NEAR(*timed->spread.rel_ci, 12.706 / 2, 1e-9);
}

TEST(TimeEvaluatorTest, OneRepeatHasNoSpread) {
  FakeClock clock;
  FakeKernel kernel{&clock, 1000};
  auto timed = EvaluateTime(kernel.AsRunOnce(), {.number = 1, .repeat = 1}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_FALSE(timed->spread.stddev_s.has_value());
  EXPECT_FALSE(timed->spread.rel_ci.has_value());
}

TEST(TimeEvaluatorTest, AdaptiveRepeatsStopWhenTheIntervalIsNarrowEnough) {
  // Noisy first repeats, then steady ones: the interval narrows as steady
  // repeats accumulate, and the evaluator stops as soon as it is +-5 %.
  FakeClock clock;
  int calls = 0;
  std::vector<int64_t> durations = {1000, 1300, 900, 1200};
  for (int i = 0; i < 200; ++i) durations.push_back(i % 2 == 0 ? 1000 : 1010);
  auto timed =
      EvaluateTime(RepeatDurations(&clock, durations, &calls),
                   {.number = 1, .repeat = 4, .max_repeat = 200, .target_rel_ci = 0.05}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_GT(timed->timed_repeats, 4);
  EXPECT_LT(timed->timed_repeats, 200);
  ASSERT_TRUE(timed->spread.rel_ci.has_value());
  EXPECT_LE(*timed->spread.rel_ci, 0.05);
  // One repeat fewer would not have met the target.
  std::vector<double> fewer;
  for (int i = 0; i < timed->timed_repeats - 1; ++i) fewer.push_back(durations[i] / 1e9);
  EXPECT_GT(*CostSpreadOf(fewer).rel_ci, 0.05);
  EXPECT_EQ(timed->costs.size(), static_cast<size_t>(timed->timed_repeats - 2));
}

TEST(TimeEvaluatorTest, AdaptiveRepeatsStopAtTheCap) {
  FakeClock clock;
  int calls = 0;
  // Alternating 1 us and 3 us never gets within +-1 %.
  std::vector<int64_t> durations;
  for (int i = 0; i < 20; ++i) durations.push_back(i % 2 == 0 ? 1000 : 3000);
  auto timed =
      EvaluateTime(RepeatDurations(&clock, durations, &calls),
                   {.number = 1, .repeat = 3, .max_repeat = 7, .target_rel_ci = 0.01}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_EQ(timed->timed_repeats, 7);
  EXPECT_EQ(calls, 1 + 7);
  ASSERT_TRUE(timed->spread.rel_ci.has_value());
  EXPECT_GT(*timed->spread.rel_ci, 0.01);
}

TEST(TimeEvaluatorTest, AFirstRepeatOverTheRejectionBoundIsTheOnlyOne) {
  FakeClock clock;
  int calls = 0;
  // 3 us per call against a bound of 2 us: one repeat, one cost.
  auto timed = EvaluateTime(RepeatDurations(&clock, {3000, 1000, 1000}, &calls),
                            {.number = 1, .repeat = 3, .reject_above_s = 2e-6}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_TRUE(timed->rejected_early);
  EXPECT_EQ(timed->timed_repeats, 1);
  EXPECT_EQ(calls, 1 + 1);
  ASSERT_EQ(timed->costs.size(), 1u);
  EXPECT_DOUBLE_EQ(timed->costs[0], 3e-6);
  // Under the bound: every repeat, as without one.
  calls = 0;
  timed = EvaluateTime(RepeatDurations(&clock, {1000, 3000, 1000}, &calls),
                       {.number = 1, .repeat = 3, .reject_above_s = 2e-6}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_FALSE(timed->rejected_early);
  EXPECT_EQ(timed->timed_repeats, 3);
  // A negative or non-finite bound is refused.
  EXPECT_FALSE(EvaluateTime(RepeatDurations(&clock, {1000}, &calls),
                            {.number = 1, .repeat = 1, .reject_above_s = -1}, clock)
                   .ok());
}

TEST(TimeEvaluatorTest, WithoutATargetMaxRepeatAddsNothing) {
  FakeClock clock;
  int calls = 0;
  auto timed = EvaluateTime(RepeatDurations(&clock, {1000, 3000, 1000, 3000}, &calls),
                            {.number = 1, .repeat = 3, .max_repeat = 50}, clock);
  ASSERT_TRUE(timed.ok()) << timed.status();
  EXPECT_EQ(timed->timed_repeats, 3);
}

TEST(CostSpreadTest, TrimmedMeanIntervalUsesTheWinsorizedSample) {
  // Raw {1, 2, 3, 4, 100}: trimmed mean of {2, 3, 4} = 3; winsorized
  // {2, 2, 3, 4, 4} has sd 1; se = 1 / (3/5 * sqrt(5)); t with 2 df.
  const std::vector<double> raw = {4, 1, 100, 3, 2};
  CostSpread spread = CostSpreadOf(raw);
  ASSERT_TRUE(spread.rel_ci.has_value());
  EXPECT_NEAR(*spread.rel_ci, 4.303 * (1.0 / (0.6 * std::sqrt(5.0))) / 3.0, 1e-9);
  // The outlier inflates the plain standard deviation, not the interval.
  EXPECT_GT(*spread.stddev_s, 40.0);
}

TEST(CostSpreadTest, StudentQuantilesMatchTheTableAndTheLimit) {
  EXPECT_DOUBLE_EQ(StudentT95(1), 12.706);
  EXPECT_DOUBLE_EQ(StudentT95(30), 2.042);
  EXPECT_NEAR(StudentT95(31), 2.040, 1e-3);
  EXPECT_NEAR(StudentT95(120), 1.980, 1e-3);
  EXPECT_NEAR(StudentT95(100000), 1.960, 1e-3);
}

}  // namespace
}  // namespace tunefleet
