#include "kernel_runtime/time_evaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

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
  if (options.max_repeat != 0 && options.max_repeat < options.repeat) {
    return absl::InvalidArgumentError(
        absl::StrCat("time evaluator: max_repeat must be 0 or >= repeat (", options.repeat,
                     "), got ", options.max_repeat));
  }
  if (!(options.target_rel_ci >= 0 && options.target_rel_ci < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "time evaluator: target_rel_ci must be in [0, 1), got ", options.target_rel_ci));
  }
  if (!(options.reject_above_s >= 0) || !std::isfinite(options.reject_above_s)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "time evaluator: reject_above_s must be finite and >= 0, got ", options.reject_above_s));
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

double Mean(absl::Span<const double> values) {
  double sum = 0;
  for (double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

double SampleStddev(absl::Span<const double> values) {
  const double mean = Mean(values);
  double squares = 0;
  for (double value : values) squares += (value - mean) * (value - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

}  // namespace

double StudentT95(int degrees_of_freedom) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                      2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                      2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                      2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (degrees_of_freedom < 1) return std::numeric_limits<double>::infinity();
  if (degrees_of_freedom <= 30) return kTable[degrees_of_freedom - 1];
  constexpr double z = 1.959964;
  const double df = degrees_of_freedom;
  return z + (z * z * z + z) / (4 * df) +
         (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * df * df);
}

std::vector<double> TrimCosts(std::vector<double> raw_costs) {
  if (raw_costs.size() <= 2) return raw_costs;
  std::sort(raw_costs.begin(), raw_costs.end());
  return std::vector<double>(raw_costs.begin() + 1, raw_costs.end() - 1);
}

CostSpread CostSpreadOf(absl::Span<const double> raw_costs) {
  CostSpread spread;
  const size_t n = raw_costs.size();
  if (n < 2) return spread;
  const double stddev = SampleStddev(raw_costs);
  spread.stddev_s = stddev;

  double center;  // the mean a reader computes from the stored costs
  double standard_error;
  int degrees_of_freedom;
  if (n <= 3) {
    center = Mean(TrimCosts(std::vector<double>(raw_costs.begin(), raw_costs.end())));
    standard_error = stddev / std::sqrt(static_cast<double>(n));
    degrees_of_freedom = static_cast<int>(n) - 1;
  } else {
    // One cost trimmed from each end (Tukey-McLaughlin): the winsorized
    // sample replaces the min by the second smallest and the max by the
    // second largest.
    size_t low = 0;
    for (size_t i = 1; i < n; ++i) {
      if (raw_costs[i] < raw_costs[low]) low = i;
    }
    size_t high = low == 0 ? 1 : 0;
    for (size_t i = 0; i < n; ++i) {
      if (i != low && raw_costs[i] > raw_costs[high]) high = i;
    }
    double second_low = std::numeric_limits<double>::infinity();
    double second_high = -std::numeric_limits<double>::infinity();
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      sum += raw_costs[i];
      if (i != low) second_low = std::min(second_low, raw_costs[i]);
      if (i != high) second_high = std::max(second_high, raw_costs[i]);
    }
    center = (sum - raw_costs[low] - raw_costs[high]) / static_cast<double>(n - 2);
    std::vector<double> winsorized(raw_costs.begin(), raw_costs.end());
    winsorized[low] = second_low;
    winsorized[high] = second_high;
    const double kept_fraction = static_cast<double>(n - 2) / static_cast<double>(n);
    standard_error = SampleStddev(winsorized) / (kept_fraction * std::sqrt(static_cast<double>(n)));
    degrees_of_freedom = static_cast<int>(n) - 3;
  }
  if (center > 0) spread.rel_ci = StudentT95(degrees_of_freedom) * standard_error / center;
  return spread;
}

[[nodiscard]] absl::StatusOr<TimeEvaluation> EvaluateTime(const std::function<int32_t()>& run_once,
                                                          const TimeEvaluatorOptions& options,
                                                          ClockInterface& clock) {
  if (absl::Status valid = ValidateOptions(options); !valid.ok()) return valid;

  // The warm-up call pays one-time costs (page faults on fresh buffers, lazy
  // binding, cold instruction cache) outside every timed region.
  if (int32_t rc = run_once(); rc != 0) return KernelFailed(rc, "the warm-up call");

  const bool adaptive = options.target_rel_ci > 0;
  const int max_repeat = adaptive ? std::max(options.repeat, options.max_repeat) : options.repeat;
  int number = options.number;
  std::vector<double> raw_costs;
  raw_costs.reserve(options.repeat);
  TimeEvaluation evaluation;
  for (int repeat_index = 0; repeat_index < max_repeat; ++repeat_index) {
    if (options.before_repeat) options.before_repeat();
    double duration_ms = 0.0;
    int64_t duration_nanos = 0;
    int zero_time_iterations = 0;
    do {
      if (duration_ms > 0.0) number = NextNumber(number, duration_ms, options.min_repeat_ms);
      const int64_t start = clock.NowNanos();
      for (int call = 0; call < number; ++call) {
        if (int32_t rc = run_once(); rc != 0) {
          return KernelFailed(
              rc, absl::StrCat("repeat ", repeat_index + 1, " of ",
                               repeat_index < options.repeat ? absl::StrCat(options.repeat)
                                                             : absl::StrCat("up to ", max_repeat),
                               ", call ", call + 1));
        }
      }
      duration_nanos = clock.NowNanos() - start;
      if (duration_nanos <= 0) ++zero_time_iterations;
      duration_ms = duration_nanos / 1e6;
    } while (duration_ms < options.min_repeat_ms &&
             zero_time_iterations < options.limit_zero_time_iterations);
    raw_costs.push_back(duration_nanos / 1e9 / number);
    if (repeat_index == 0 && options.reject_above_s > 0 && raw_costs[0] > options.reject_above_s) {
      evaluation.spread = CostSpreadOf(raw_costs);
      evaluation.rejected_early = true;
      break;
    }

    if (repeat_index + 1 < options.repeat) continue;
    evaluation.spread = CostSpreadOf(raw_costs);
    if (!adaptive) break;
    const std::optional<double>& rel_ci = evaluation.spread.rel_ci;
    if (rel_ci.has_value() && *rel_ci <= options.target_rel_ci) break;
  }
  evaluation.timed_repeats = static_cast<int>(raw_costs.size());
  evaluation.costs = TrimCosts(std::move(raw_costs));
  return evaluation;
}

}  // namespace tunefleet
