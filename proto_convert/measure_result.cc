#include "proto_convert/measure_result.h"

namespace tunefleet {

MeasureResult ToMeasureResult(const proto::TrialResult& result) {
  MeasureResult measure;
  const int error_no = result.error_no();
  measure.error_no = (error_no >= static_cast<int>(MeasureErrorNo::kNoError) &&
                      error_no <= static_cast<int>(MeasureErrorNo::kUnknown))
                         ? static_cast<MeasureErrorNo>(error_no)
                         : MeasureErrorNo::kUnknown;
  measure.error_msg = result.error_msg();
  if (measure.ok() && result.costs_size() > 0) {
    measure.costs.assign(result.costs().begin(), result.costs().end());
  } else {
    if (measure.ok()) {
      // A success without costs is not one: never record it as a 0 s kernel.
      measure.error_no = MeasureErrorNo::kUnknown;
      measure.error_msg = "reported success but no costs";
    }
    measure.costs = {1e9};
  }
  measure.all_cost = result.all_cost();
  measure.timestamp = result.timestamp();
  return measure;
}

MeasureResult ToMeasureResult(const proto::RunResult& result, double timestamp_unix_s) {
  // The two messages share these fields; one set of rules reads them.
  proto::TrialResult trial;
  trial.mutable_costs()->CopyFrom(result.costs());
  trial.set_error_no(result.error_no());
  trial.set_error_msg(result.error_msg());
  trial.set_all_cost(result.prepare_seconds() + result.load_seconds() + result.check_seconds() +
                     result.run_seconds());
  trial.set_timestamp(timestamp_unix_s);
  return ToMeasureResult(trial);
}

proto::TrialResult ToTrialResult(const MeasureResult& result) {
  proto::TrialResult trial;
  trial.mutable_costs()->Add(result.costs.begin(), result.costs.end());
  trial.set_error_no(static_cast<int>(result.error_no));
  trial.set_error_msg(result.error_msg);
  trial.set_all_cost(result.all_cost);
  trial.set_timestamp(result.timestamp);
  return trial;
}

proto::TrialResult ToTrialResult(const proto::RunResult& run, double timestamp_unix_s) {
  return ToTrialResult(ToMeasureResult(run, timestamp_unix_s));
}

}  // namespace tunefleet
