#include "common/clock.h"

#include <chrono>
#include <thread>

namespace tunefleet {

int64_t RealClock::NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t RealClock::WallNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void RealClock::SleepNanos(int64_t nanos) {
  if (nanos <= 0) return;
  std::this_thread::sleep_for(std::chrono::nanoseconds(nanos));
}

ClockInterface& SystemClock() {
  static RealClock* const clock = new RealClock();
  return *clock;
}

int64_t FakeClock::NowNanos() {
  absl::MutexLock lock(&mu_);
  return now_nanos_;
}

int64_t FakeClock::WallNanos() {
  absl::MutexLock lock(&mu_);
  return now_nanos_ + wall_minus_now_nanos_;
}

void FakeClock::SleepNanos(int64_t nanos) {
  absl::MutexLock lock(&mu_);
  sleeps_.push_back(nanos);
  if (nanos > 0) now_nanos_ += nanos;
}

void FakeClock::AdvanceNanos(int64_t nanos) {
  absl::MutexLock lock(&mu_);
  now_nanos_ += nanos;
}

std::vector<int64_t> FakeClock::sleeps() const {
  absl::MutexLock lock(&mu_);
  return sleeps_;
}

}  // namespace tunefleet
