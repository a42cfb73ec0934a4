#include "device_agent/time_evaluator.h"

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
  auto costs = EvaluateTime(
      kernel.AsRunOnce(),
      {.number = 4, .repeat = 3, .min_repeat_ms = 0, .cooldown_interval_s = 0.1}, clock);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_THAT(*costs, ElementsAre(DoubleEq(2e-6), DoubleEq(2e-6), DoubleEq(2e-6)));
  EXPECT_EQ(kernel.calls, 1 + 3 * 4);  // warm-up + repeat * number
  // Cooldown between repeats only, not after the last.
  EXPECT_THAT(clock.sleeps(), ElementsAre(100 * kMillis, 100 * kMillis));
}

TEST(TimeEvaluatorTest, NumberJumpsToReachMinRepeatMs) {
  FakeClock clock;
  FakeKernel kernel{&clock, 1 * kMillis};
  auto costs = EvaluateTime(
      kernel.AsRunOnce(), {.number = 1, .repeat = 3, .min_repeat_ms = 10, .cooldown_interval_s = 0},
      clock);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_THAT(*costs, ElementsAre(DoubleEq(1e-3), DoubleEq(1e-3), DoubleEq(1e-3)));
  // Repeat 1: 1 call lasts 1 ms < 10 ms, so number = max(10 / 1 + 1, 1.618)
  // = 11, and 11 calls last 11 ms. Repeats 2 and 3 start at number = 11.
  EXPECT_EQ(kernel.calls, 1 + (1 + 11) + 11 + 11);
  EXPECT_TRUE(clock.sleeps().empty());
}

TEST(TimeEvaluatorTest, NumberGrowsByGoldenRatioWhenThatIsMore) {
  FakeClock clock;
  FakeKernel kernel{&clock, 1 * kMillis};
  auto costs = EvaluateTime(
      kernel.AsRunOnce(), {.number = 8, .repeat = 3, .min_repeat_ms = 10, .cooldown_interval_s = 0},
      clock);
  ASSERT_TRUE(costs.ok()) << costs.status();
  // 8 calls last 8 ms < 10 ms: number = int(max(10 / 1 + 1, 8 * 1.618 = 12.94)) = 12.
  EXPECT_EQ(kernel.calls, 1 + (8 + 12) + 12 + 12);
  EXPECT_THAT(*costs, ElementsAre(DoubleEq(1e-3), DoubleEq(1e-3), DoubleEq(1e-3)));
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
  auto costs = EvaluateTime(
      run_once, {.number = 2, .repeat = 1, .min_repeat_ms = 5, .cooldown_interval_s = 0}, clock);
  ASSERT_TRUE(costs.ok()) << costs.status();
  // warm-up (2 ms); 2 calls: 2 + 0.1 = 2.1 ms -> number = int(max(5 / 1.05 + 1, 3.236)) = 5;
  // 5 calls: 0.5 ms -> number = int(max(5 / 0.1 + 1, 8.09)) = 51; 51 calls: 5.1 ms, done.
  EXPECT_EQ(calls, 1 + 2 + 5 + 51);
  EXPECT_THAT(*costs, ElementsAre(DoubleEq(5.1e-3 / 51)));
}

TEST(TimeEvaluatorTest, StopsGrowingWhenTheClockNeverMoves) {
  FakeClock clock;
  FakeKernel kernel{&clock, 0};
  auto costs = EvaluateTime(kernel.AsRunOnce(),
                            {.number = 4,
                             .repeat = 2,
                             .min_repeat_ms = 1,
                             .cooldown_interval_s = 0,
                             .limit_zero_time_iterations = 100},
                            clock);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_THAT(*costs, ElementsAre(0.0, 0.0));
  EXPECT_EQ(kernel.calls, 1 + 2 * 100 * 4);
}

TEST(TimeEvaluatorTest, BeforeRepeatRunsBeforeEachRepeatOutsideTheTimedRegion) {
  FakeClock clock;
  FakeKernel kernel{&clock, 1000};
  std::vector<int> calls_seen_by_hook;
  TimeEvaluatorOptions options{.number = 4, .repeat = 3, .cooldown_interval_s = 0};
  options.before_repeat = [&] {
    calls_seen_by_hook.push_back(kernel.calls);
    clock.AdvanceNanos(1 * kMillis);  // a slow flush must not count
  };
  auto costs = EvaluateTime(kernel.AsRunOnce(), options, clock);
  ASSERT_TRUE(costs.ok()) << costs.status();
  EXPECT_THAT(calls_seen_by_hook, ElementsAre(1, 5, 9));
  EXPECT_THAT(*costs, ElementsAre(DoubleEq(1e-6), DoubleEq(1e-6), DoubleEq(1e-6)));
}

TEST(TimeEvaluatorTest, KernelFailureDuringWarmUpIsAnError) {
  FakeClock clock;
  auto costs = EvaluateTime([] { return 3; }, {}, clock);
  ASSERT_FALSE(costs.ok());
  EXPECT_EQ(costs.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(costs.status().message(), HasSubstr("kernel returned 3 during the warm-up call"));
}

TEST(TimeEvaluatorTest, KernelFailureDuringARepeatNamesTheCall) {
  FakeClock clock;
  int calls = 0;
  auto costs = EvaluateTime([&] { return ++calls == 7 ? 1 : 0; },
                            {.number = 4, .repeat = 3, .cooldown_interval_s = 0}, clock);
  ASSERT_FALSE(costs.ok());
  // Call 7 = warm-up + 4 calls of repeat 1 + call 2 of repeat 2.
  EXPECT_THAT(costs.status().message(), HasSubstr("during repeat 2 of 3, call 2"));
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
  EXPECT_EQ(EvaluateTime(never, {.cooldown_interval_s = -0.5}, clock).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TimeEvaluatorTest, RealClockGivesPositiveCosts) {
  RealClock clock;
  volatile double sink = 0;
  auto costs = EvaluateTime(
      [&]() -> int32_t {
        for (int i = 0; i < 1000; ++i) sink = sink + i;
        return 0;
      },
      {.number = 10, .repeat = 3, .cooldown_interval_s = 0}, clock);
  ASSERT_TRUE(costs.ok()) << costs.status();
  ASSERT_EQ(costs->size(), 3u);
  for (double cost : *costs) EXPECT_GT(cost, 0.0);
}

TEST(FlushCpuCacheTest, KeepsDataAndAcceptsUnalignedAndEmptyRanges) {
  std::vector<float> data(10000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  std::vector<CacheFlushRange> ranges = {
      {data.data(), data.size() * sizeof(float)},
      {reinterpret_cast<const char*>(data.data()) + 3, 100},
      {data.data(), 0},
  };
  FlushCpuCache(ranges);
  for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], static_cast<float>(i));
}

}  // namespace
}  // namespace tunefleet
