#include "kernel_runtime/cuda_event_clock.h"

#include <cmath>
#include <utility>

namespace tunefleet {

absl::StatusOr<std::unique_ptr<CudaEventClock>> CudaEventClock::Create(const CudaDriver& driver,
                                                                       ClockInterface* host_clock) {
  absl::StatusOr<CudaEvent> last = CudaEvent::Create(driver);
  if (!last.ok()) return last.status();
  absl::StatusOr<CudaEvent> next = CudaEvent::Create(driver);
  if (!next.ok()) return next.status();
  // The first reading: everything launched before it is outside every
  // interval this clock measures.
  absl::Status first = last->Record();
  if (first.ok()) first = last->Synchronize();
  if (!first.ok()) return first;
  return std::unique_ptr<CudaEventClock>(
      new CudaEventClock(*std::move(last), *std::move(next), host_clock));
}

int64_t CudaEventClock::NowNanos() {
  if (!status_.ok()) return now_nanos_;
  absl::Status recorded = next_.Record();
  if (recorded.ok()) recorded = next_.Synchronize();
  absl::StatusOr<float> elapsed_ms =
      recorded.ok() ? next_.MillisecondsSince(last_) : absl::StatusOr<float>(recorded);
  if (!elapsed_ms.ok()) {
    status_ = elapsed_ms.status();
    return now_nanos_;
  }
  now_nanos_ += std::llround(static_cast<double>(*elapsed_ms) * 1e6);
  std::swap(last_, next_);
  return now_nanos_;
}

}  // namespace tunefleet
