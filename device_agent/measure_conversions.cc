#include "device_agent/measure_conversions.h"

#include <utility>

namespace tunefleet {

proto::MeasureOptions ToProto(const MeasureOptions& options) {
  proto::MeasureOptions proto;
  proto.set_number(options.number);
  proto.set_repeat(options.repeat);
  proto.set_min_repeat_ms(options.min_repeat_ms);
  proto.set_cooldown_interval_s(options.cooldown_interval_s);
  proto.set_enable_cpu_cache_flush(options.enable_cpu_cache_flush);
  proto.set_timeout_s(options.timeout_s);
  proto.set_check_correctness(options.check_correctness);
  proto.set_input_seed(options.input_seed);
  return proto;
}

proto::RunRequest MakeRunRequest(const Workload& workload, std::string shared_object,
                                 std::string entry_name, std::string artifact_hash,
                                 const MeasureOptions& options) {
  proto::RunRequest request;
  request.set_workload_name(workload.name());
  request.set_workload_args_json(workload.args().dump());
  request.set_shared_object(std::move(shared_object));
  request.set_entry_name(std::move(entry_name));
  request.set_artifact_hash(std::move(artifact_hash));
  *request.mutable_options() = ToProto(options);
  return request;
}

MeasureResult ToMeasureResult(const proto::RunResult& result, double timestamp_unix_s) {
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
      measure.error_msg = "runner reported success but no costs";
    }
    measure.costs = {1e9};
  }
  measure.all_cost = result.prepare_seconds() + result.load_seconds() + result.check_seconds() +
                     result.run_seconds();
  measure.timestamp = timestamp_unix_s;
  return measure;
}

}  // namespace tunefleet
