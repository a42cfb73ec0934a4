// Time for device_agent code that measures or waits: a small interface with a
// real monotonic clock and a fake one that tests advance by hand.
//
// Use ClockInterface wherever code reads the time or sleeps, so that tests can
// drive it deterministically (no wall-clock asserts, no real sleeps):
//
//   SteadyClock clock;                       // production
//   FakeClock clock;                         // tests: clock.AdvanceNanos(1000)
//   auto costs = EvaluateTime(run_once, options, clock);
//
// Only differences of NowNanos() values mean anything (a monotonic clock has
// no epoch).
#ifndef TUNEFLEET_DEVICE_AGENT_CLOCK_H_
#define TUNEFLEET_DEVICE_AGENT_CLOCK_H_

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
  // Blocks the calling thread for `nanos` (no-op when <= 0).
  virtual void SleepNanos(int64_t nanos) = 0;
};

// std::chrono::steady_clock and a real sleep. Thread-safe, stateless.
class SteadyClock final : public ClockInterface {
 public:
  int64_t NowNanos() override;
  void SleepNanos(int64_t nanos) override;
};

// A clock that moves only when told to. SleepNanos advances the clock
// instead of blocking and records the request, so tests can assert how long
// code chose to sleep. Thread-safe.
class FakeClock final : public ClockInterface {
 public:
  explicit FakeClock(int64_t start_nanos = 0) : now_nanos_(start_nanos) {}

  int64_t NowNanos() override;
  void SleepNanos(int64_t nanos) override;

  void AdvanceNanos(int64_t nanos);
  // Every SleepNanos argument so far, in call order.
  std::vector<int64_t> sleeps() const;

 private:
  mutable absl::Mutex mu_;
  int64_t now_nanos_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> sleeps_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_CLOCK_H_
