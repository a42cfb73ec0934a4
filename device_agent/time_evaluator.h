// The time evaluator: how long one run of a kernel takes, with exactly the
// meaning of AutoTVM's (TVM v0.18 `WrapTimeEvaluator`), so costs compare with
// records users already have.
//
//   TimeEvaluatorOptions options{.number = 4, .repeat = 3, .min_repeat_ms = 0,
//                                .cooldown_interval_s = 0.1};
//   RealClock clock;
//   TF_ASSIGN_OR_RETURN(std::vector<double> costs,
//                       EvaluateTime([&] { return entry(args, rt); }, options, clock));
//
// The procedure:
//   one warm-up call (not timed);
//   for each of `repeat` repeats:
//     before_repeat() if set (e.g. the CPU cache flush below);
//     duration_ms = 0
//     do {
//       if (duration_ms > 0)
//         number = max(min_repeat_ms / (duration_ms / number) + 1, number * 1.618)
//       time `number` back-to-back calls -> duration_ms
//     } while (duration_ms < min_repeat_ms)
//     cost = duration / number   (seconds per call)
//     sleep cooldown_interval_s, except after the last repeat;
// `number` carries over from one repeat to the next, as in TVM. Like TVM, a
// repeat whose timer reads 0 ns `limit_zero_time_iterations` times stops
// growing (a clock too coarse for the kernel would otherwise loop forever).
// Unlike TVM, no cooldown follows the last repeat: it only delays the result.
#ifndef TUNEFLEET_DEVICE_AGENT_TIME_EVALUATOR_H_
#define TUNEFLEET_DEVICE_AGENT_TIME_EVALUATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/clock.h"

namespace tunefleet {

struct TimeEvaluatorOptions {
  int number = 4;                    // calls per repeat, at least 1 (grows, see above)
  int repeat = 3;                    // repeats, at least 1; one cost each
  int min_repeat_ms = 0;             // grow `number` until a repeat lasts this long
  double cooldown_interval_s = 0.1;  // sleep between repeats
  int limit_zero_time_iterations = 100;
  // Called before each repeat, outside the timed region (TVM's f_preproc).
  std::function<void()> before_repeat;
};

// Runs the procedure above. `run_once` makes one call of the kernel and
// returns its status (0 = success, the kernel ABI's convention). Returns the
// per-repeat costs in seconds. Errors: InvalidArgument for bad options,
// Aborted naming the call when run_once returns non-zero.
[[nodiscard]] absl::StatusOr<std::vector<double>> EvaluateTime(
    const std::function<int32_t()>& run_once, const TimeEvaluatorOptions& options,
    ClockInterface& clock);

// A memory range to evict from the CPU caches.
struct CacheFlushRange {
  const void* data;
  size_t bytes;
};

// Writes back and invalidates every cache line of `ranges` from all cache
// levels (x86: clflush per line, then mfence; AArch64: `dc civac` per line,
// then `dsb ish`; elsewhere a no-op). This is what TVM's
// enable_cpu_cache_flush does to the kernel's arguments before each repeat,
// so the first call of a repeat reads its inputs from memory, as a layer in
// a real network would.
void FlushCpuCache(absl::Span<const CacheFlushRange> ranges);

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_TIME_EVALUATOR_H_
