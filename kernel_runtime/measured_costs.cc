#include "kernel_runtime/measured_costs.h"

namespace tunefleet {

TimeEvaluatorOptions TimingOptions(const MeasureOptions& options) {
  return TimeEvaluatorOptions{.number = options.number,
                              .repeat = options.repeat,
                              .min_repeat_ms = options.min_repeat_ms,
                              .max_repeat = options.max_repeat,
                              .target_rel_ci = options.target_rel_ci,
                              .reject_above_s = options.reject_above_s};
}

void SetTimedCosts(const TimeEvaluation& timed, proto::RunResult* result) {
  result->clear_costs();
  for (double cost : timed.costs) result->add_costs(cost);
  result->set_timed_repeats(timed.timed_repeats);
  if (timed.spread.stddev_s.has_value()) {
    result->set_cost_stddev_s(*timed.spread.stddev_s);
  } else {
    result->clear_cost_stddev_s();
  }
  if (timed.spread.rel_ci.has_value()) {
    result->set_cost_rel_ci(*timed.spread.rel_ci);
  } else {
    result->clear_cost_rel_ci();
  }
}

}  // namespace tunefleet
