// Time for every TuneFleet component: one small interface with a real clock
// and a fake one that tests advance by hand (ray's src/ray/util/clock.h,
// envoy's TimeSource).
//
// Take a ClockInterface wherever code reads the time or sleeps, so that tests
// drive it deterministically (no wall-clock asserts, no real sleeps):
//
//   RealClock clock;                         // production
//   FakeClock clock;                         // tests: clock.AdvanceSeconds(5)
//   auto costs = EvaluateTime(run_once, options, clock);
//   lease.deadline = clock.NowSeconds() + timeout_s;
//   record.timestamp = clock.WallSeconds();
//
// Two time lines: NowNanos is monotonic (deadlines, durations; only
// differences mean anything), WallNanos is unix time (timestamps people read
// and records keep; it may jump when the system clock is set).
#ifndef TUNEFLEET_COMMON_CLOCK_H_
#define TUNEFLEET_COMMON_CLOCK_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tunefleet {

class ClockInterface {
 public:
  virtual ~ClockInterface() = default;

  // Monotonic time in nanoseconds.
  virtual int64_t NowNanos() = 0;
  // Unix time (nanoseconds since 1970-01-01 UTC).
  virtual int64_t WallNanos() = 0;
  // Blocks the calling thread for `nanos` (no-op when <= 0).
  virtual void SleepNanos(int64_t nanos) = 0;

  // The same in seconds.
  double NowSeconds() { return static_cast<double>(NowNanos()) * 1e-9; }
  double WallSeconds() { return static_cast<double>(WallNanos()) * 1e-9; }
  void SleepSeconds(double seconds) { SleepNanos(static_cast<int64_t>(seconds * 1e9)); }
};

// std::chrono's steady and system clocks and a real sleep. Thread-safe,
// stateless.
class RealClock final : public ClockInterface {
 public:
  int64_t NowNanos() override;
  int64_t WallNanos() override;
  void SleepNanos(int64_t nanos) override;
};

// The process's real clock, for code that has no clock injected (a default
// argument, a main). Never null; lives as long as the process.
ClockInterface& SystemClock();

// Time since construction (or the last Restart) on a clock's monotonic line:
// how long a build, a measurement or a tuner step took.
//
//   Stopwatch watch;                         // SystemClock()
//   Stopwatch watch(clock);                  // tests: a FakeClock
//   result.set_build_seconds(watch.ElapsedSeconds());
class Stopwatch {
 public:
  explicit Stopwatch(ClockInterface& clock = SystemClock())
      : clock_(clock), start_nanos_(clock.NowNanos()) {}
  double ElapsedSeconds() const {
    return static_cast<double>(clock_.NowNanos() - start_nanos_) * 1e-9;
  }
  void Restart() { start_nanos_ = clock_.NowNanos(); }

 private:
  ClockInterface& clock_;
  int64_t start_nanos_;
};

// A clock that moves only when told to; both time lines move together.
// SleepNanos advances the clock instead of blocking and records the request,
// so tests can assert how long code chose to sleep. Thread-safe.
class FakeClock final : public ClockInterface {
 public:
  // 2023-11-14T22:13:20Z: a plausible unix time for records made in tests.
  static constexpr int64_t kDefaultWallStartNanos = 1'700'000'000'000'000'000;

  explicit FakeClock(int64_t start_nanos = 0, int64_t wall_start_nanos = kDefaultWallStartNanos)
      : now_nanos_(start_nanos), wall_minus_now_nanos_(wall_start_nanos - start_nanos) {}

  int64_t NowNanos() override;
  int64_t WallNanos() override;
  void SleepNanos(int64_t nanos) override;

  void AdvanceNanos(int64_t nanos);
  void AdvanceSeconds(double seconds) { AdvanceNanos(static_cast<int64_t>(seconds * 1e9)); }
  // Every SleepNanos argument so far, in call order.
  std::vector<int64_t> sleeps() const;

 private:
  mutable absl::Mutex mu_;
  int64_t now_nanos_ ABSL_GUARDED_BY(mu_);
  const int64_t wall_minus_now_nanos_;
  std::vector<int64_t> sleeps_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_CLOCK_H_
