#include "device_agent/time_evaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status ValidateOptions(const TimeEvaluatorOptions& options) {
  if (options.number < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("time evaluator: number must be >= 1, got ", options.number));
  }
  if (options.repeat < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("time evaluator: repeat must be >= 1, got ", options.repeat));
  }
  if (options.min_repeat_ms < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("time evaluator: min_repeat_ms must be >= 0, got ", options.min_repeat_ms));
  }
  if (!(options.cooldown_interval_s >= 0) || !std::isfinite(options.cooldown_interval_s)) {
    return absl::InvalidArgumentError(
        absl::StrCat("time evaluator: cooldown_interval_s must be finite and >= 0, got ",
                     options.cooldown_interval_s));
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status KernelFailed(int32_t rc, absl::string_view when) {
  return absl::AbortedError(absl::StrCat(
      "kernel returned ", rc, " during ", when,
      " (non-zero means failure in the kernel ABI, e.g. a workspace allocation failed)"));
}

// TVM's growth rule, in doubles like TVM, clamped so a clock reading of a
// few nanoseconds cannot overflow an int.
int NextNumber(int number, double duration_ms, int min_repeat_ms) {
  constexpr double kGoldenRatio = 1.618;
  const double grown = std::max(min_repeat_ms / (duration_ms / number) + 1, number * kGoldenRatio);
  return static_cast<int>(std::min(grown, static_cast<double>(std::numeric_limits<int>::max())));
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::vector<double>> EvaluateTime(
    const std::function<int32_t()>& run_once, const TimeEvaluatorOptions& options,
    ClockInterface& clock) {
  if (absl::Status valid = ValidateOptions(options); !valid.ok()) return valid;

  // The warm-up call pays one-time costs (page faults on fresh buffers, lazy
  // binding, cold instruction cache) outside every timed region.
  if (int32_t rc = run_once(); rc != 0) return KernelFailed(rc, "the warm-up call");

  int number = options.number;
  std::vector<double> costs;
  costs.reserve(options.repeat);
  for (int repeat_index = 0; repeat_index < options.repeat; ++repeat_index) {
    if (options.before_repeat) options.before_repeat();
    double duration_ms = 0.0;
    int64_t duration_nanos = 0;
    int zero_time_iterations = 0;
    do {
      if (duration_ms > 0.0) number = NextNumber(number, duration_ms, options.min_repeat_ms);
      const int64_t start = clock.NowNanos();
      for (int call = 0; call < number; ++call) {
        if (int32_t rc = run_once(); rc != 0) {
          return KernelFailed(rc, absl::StrCat("repeat ", repeat_index + 1, " of ", options.repeat,
                                               ", call ", call + 1));
        }
      }
      duration_nanos = clock.NowNanos() - start;
      if (duration_nanos <= 0) ++zero_time_iterations;
      duration_ms = duration_nanos / 1e6;
    } while (duration_ms < options.min_repeat_ms &&
             zero_time_iterations < options.limit_zero_time_iterations);
    costs.push_back(duration_nanos / 1e9 / number);

    if (repeat_index + 1 < options.repeat && options.cooldown_interval_s > 0) {
      clock.SleepNanos(static_cast<int64_t>(options.cooldown_interval_s * 1e9));
    }
  }
  return costs;
}

void FlushCpuCache(absl::Span<const CacheFlushRange> ranges) {
#if defined(__x86_64__) || defined(__i386__)
  constexpr uintptr_t kLine = 64;  // clflush granularity on every x86-64 CPU
  for (const CacheFlushRange& range : ranges) {
    if (range.bytes == 0) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data) & ~(kLine - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(range.data) + range.bytes;
    for (uintptr_t line = begin; line < end; line += kLine) {
      _mm_clflush(reinterpret_cast<const void*>(line));
    }
  }
  _mm_mfence();  // clflush is ordered only by fences
#elif defined(__aarch64__)
  // CTR_EL0.DminLine: log2 of the smallest data cache line, in 4-byte words.
  uint64_t ctr;
  asm volatile("mrs %0, ctr_el0" : "=r"(ctr));
  const uintptr_t line_bytes = uintptr_t{4} << ((ctr >> 16) & 0xF);
  for (const CacheFlushRange& range : ranges) {
    if (range.bytes == 0) continue;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(range.data) & ~(line_bytes - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(range.data) + range.bytes;
    for (uintptr_t line = begin; line < end; line += line_bytes) {
      asm volatile("dc civac, %0" : : "r"(line) : "memory");
    }
  }
  asm volatile("dsb ish" : : : "memory");
#else
  (void)ranges;
#endif
}

}  // namespace tunefleet
