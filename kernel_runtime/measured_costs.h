// The glue between the request's resolved measure options
// (tuner_core/measure/measure.h), the time evaluator (time_evaluator.h) and
// the RunResult (proto/runner.proto), shared by the CPU and GPU paths of the
// runner child so that both time and report costs the same way.
//
//   const MeasureOptions options = ResolveMeasureOptions(request.options());
//   TimeEvaluatorOptions timing = TimingOptions(options);
//   absl::StatusOr<TimeEvaluation> timed = EvaluateTime(run_once, timing, clock);
//   if (timed.ok()) SetTimedCosts(*timed, &result);
#ifndef TUNEFLEET_KERNEL_RUNTIME_MEASURED_COSTS_H_
#define TUNEFLEET_KERNEL_RUNTIME_MEASURED_COSTS_H_

#include "kernel_runtime/time_evaluator.h"
#include "proto/runner.pb.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

// number, repeat, min_repeat_ms, max_repeat and target_rel_ci of `options`
// (the cooldown is the runner child's, once per trial; the cache flush hook
// is the caller's).
TimeEvaluatorOptions TimingOptions(const MeasureOptions& options);

// Replaces result's costs with timed.costs (already trimmed) and sets
// timed_repeats, cost_stddev_s and cost_rel_ci (cleared when unknown).
void SetTimedCosts(const TimeEvaluation& timed, proto::RunResult* result);

}  // namespace tunefleet

#endif  // TUNEFLEET_KERNEL_RUNTIME_MEASURED_COSTS_H_
