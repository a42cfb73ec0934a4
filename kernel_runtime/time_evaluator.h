// The time evaluator: how long one run of a kernel takes, with exactly the
// meaning of AutoTVM's (TVM v0.18 `WrapTimeEvaluator` plus the trimming of
// autotvm's `run_through_rpc`), so costs compare with records users already
// have.
//
//   TimeEvaluatorOptions options{.number = 4, .repeat = 3, .min_repeat_ms = 0};
//   RealClock clock;
//   TF_ASSIGN_OR_RETURN(TimeEvaluation timed,
//                       EvaluateTime([&] { return entry(args, rt); }, options, clock));
//   // timed.costs: trimmed once, here; readers take their plain mean.
//
// The procedure:
//   one warm-up call (not timed);
//   for each repeat (at least `repeat`, see "adaptive repeats" below):
//     before_repeat() if set (e.g. the runner child's flush of the weights);
//     duration_ms = 0
//     do {
//       if (duration_ms > 0)
//         number = max(min_repeat_ms / (duration_ms / number) + 1, number * 1.618)
//       time `number` back-to-back calls -> duration_ms
//     } while (duration_ms < min_repeat_ms)
//     raw cost = duration / number   (seconds per call)
//   costs = raw costs, and when there are more than 2: sorted, with the min
//   and the max dropped (autotvm's run_through_rpc does this once, when the
//   result is made, and stores the trimmed costs; readers then take the plain
//   mean, MeasureResult::MeanCost).
// `number` carries over from one repeat to the next, as in TVM. Like TVM, a
// repeat whose timer reads 0 ns `limit_zero_time_iterations` times stops
// growing (a clock too coarse for the kernel would otherwise loop forever).
//
// No cooldown here: AutoTVM sleeps `cooldown_interval` once per trial, after
// the measurement and outside its all_cost (run_through_rpc), and so does the
// runner child (runner_child.h).
//
// Adaptive repeats (TuneFleet's, off by default): with target_rel_ci > 0,
// after `repeat` repeats the evaluator adds repeats, up to max_repeat, until
// the 95 % confidence interval of the MEAN of the stored (trimmed) costs is
// within +-target_rel_ci of that mean. The interval is the one the result
// reports as rel_ci (CostSpreadOf below). The mean, not the median, because
// the mean of the trimmed costs is what every reader uses.
#ifndef TUNEFLEET_KERNEL_RUNTIME_TIME_EVALUATOR_H_
#define TUNEFLEET_KERNEL_RUNTIME_TIME_EVALUATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/clock.h"

namespace tunefleet {

struct TimeEvaluatorOptions {
  int number = 4;              // calls per repeat, at least 1 (grows, see above)
  int repeat = 3;              // repeats, at least 1; one raw cost each
  int min_repeat_ms = 0;       // grow `number` until a repeat lasts this long
  int max_repeat = 0;          // adaptive cap; 0 means `repeat`; else >= repeat
  double target_rel_ci = 0.0;  // 0: no adaptive repeats; else in (0, 1)
  // Early rejection: a first repeat costing more than this (seconds per
  // call) is the only one; 0: off.
  double reject_above_s = 0.0;
  int limit_zero_time_iterations = 100;
  // Called before each repeat, outside the timed region (TVM's f_preproc).
  std::function<void()> before_repeat;
};

// The spread of a set of raw per-repeat costs.
//   stddev_s: their sample standard deviation (n - 1), unset for n < 2.
//   rel_ci:   the half-width of the 95 % confidence interval of the mean of
//             the trimmed costs, divided by that mean. n >= 4: the
//             Tukey-McLaughlin interval of a trimmed mean (winsorized
//             variance, Student t with n - 3 degrees of freedom); n = 2 or 3:
//             the t interval of the plain mean of all n (one kept cost cannot
//             estimate its own spread), relative to the stored mean. Unset
//             for n < 2 or a mean <= 0.
struct CostSpread {
  std::optional<double> stddev_s;
  std::optional<double> rel_ci;
};
CostSpread CostSpreadOf(absl::Span<const double> raw_costs);

// AutoTVM's trimming: more than 2 costs -> sorted, min and max dropped.
std::vector<double> TrimCosts(std::vector<double> raw_costs);

// The two-sided 95 % quantile of Student's t with `degrees_of_freedom` >= 1
// (a table to 30, a Cornish-Fisher expansion beyond).
double StudentT95(int degrees_of_freedom);

struct TimeEvaluation {
  std::vector<double> costs;    // seconds per call, trimmed (see above)
  int timed_repeats = 0;        // repeats timed, before trimming
  CostSpread spread;            // of the timed repeats
  bool rejected_early = false;  // the first repeat was over reject_above_s
};

// Runs the procedure above. `run_once` makes one call of the kernel and
// returns its status (0 = success, the kernel ABI's convention). Errors:
// InvalidArgument for bad options, Aborted naming the call when run_once
// returns non-zero.
[[nodiscard]] absl::StatusOr<TimeEvaluation> EvaluateTime(const std::function<int32_t()>& run_once,
                                                          const TimeEvaluatorOptions& options,
                                                          ClockInterface& clock);

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_TIME_EVALUATOR_H_
