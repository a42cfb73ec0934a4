// A ClockInterface that reads the GPU's timeline through CUDA events, so the
// time evaluator (time_evaluator.h) times GPU kernels exactly as it times CPU
// ones: each NowNanos() records an event on the default stream, waits for it,
// and advances by the event-measured time since the previous reading. The
// interval between two readings therefore covers all the GPU work launched
// in between, ending when the GPU finishes it:
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<CudaEventClock> clock,
//                       CudaEventClock::Create(driver, &host_clock));
//   EvaluateTime([&] { return LaunchOnce(); }, options, *clock);
//   TF_RETURN_IF_ERROR(clock->status());
//
// Consecutive readings are differenced one interval at a time (float
// milliseconds from cuEventElapsedTime, ~0.5 us resolution) and summed in
// integer nanoseconds, so precision does not decay over a long measurement.
// NowNanos cannot fail as a call: the first driver error (a faulting kernel
// surfaces at the event wait) is kept in status() and the clock stops
// advancing. SleepNanos (the evaluator's cooldown) sleeps on `host_clock`.
// Use from the thread whose current CUDA context launches the kernels.
#ifndef TUNEFLEET_KERNEL_RUNTIME_CUDA_EVENT_CLOCK_H_
#define TUNEFLEET_KERNEL_RUNTIME_CUDA_EVENT_CLOCK_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "kernel_runtime/cuda_driver.h"

namespace tunefleet {

class CudaEventClock final : public ClockInterface {
 public:
  // Creates two events and takes the first reading (0). `driver` and
  // `host_clock` must outlive the clock.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CudaEventClock>> Create(
      const CudaDriver& driver, ClockInterface* host_clock);

  int64_t NowNanos() override;
  int64_t WallNanos() override { return host_clock_->WallNanos(); }
  void SleepNanos(int64_t nanos) override { host_clock_->SleepNanos(nanos); }

  // OK, or the first error of an event call.
  const absl::Status& status() const { return status_; }

 private:
  CudaEventClock(CudaEvent last, CudaEvent next, ClockInterface* host_clock)
      : last_(std::move(last)), next_(std::move(next)), host_clock_(host_clock) {}

  CudaEvent last_;  // recorded by the previous reading
  CudaEvent next_;  // recorded by the next one
  ClockInterface* host_clock_;
  int64_t now_nanos_ = 0;
  absl::Status status_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_CUDA_EVENT_CLOCK_H_
