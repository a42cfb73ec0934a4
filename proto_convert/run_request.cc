#include "proto_convert/run_request.h"

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
  if (options.max_repeat != 0) proto.set_max_repeat(options.max_repeat);
  proto.set_target_rel_ci(options.target_rel_ci);
  proto.set_reject_above_s(options.reject_above_s);
  return proto;
}

MeasureOptions ResolveMeasureOptions(const proto::MeasureOptions& options) {
  MeasureOptions resolved;  // the defaults
  if (options.has_number()) resolved.number = options.number();
  if (options.has_repeat()) resolved.repeat = options.repeat();
  resolved.min_repeat_ms = options.min_repeat_ms();
  if (options.has_cooldown_interval_s())
    resolved.cooldown_interval_s = options.cooldown_interval_s();
  resolved.enable_cpu_cache_flush = options.enable_cpu_cache_flush();
  if (options.has_timeout_s()) resolved.timeout_s = options.timeout_s();
  if (options.has_check_correctness()) resolved.check_correctness = options.check_correctness();
  if (options.has_input_seed()) resolved.input_seed = options.input_seed();
  if (options.has_max_repeat()) resolved.max_repeat = options.max_repeat();
  if (options.has_target_rel_ci()) resolved.target_rel_ci = options.target_rel_ci();
  resolved.reject_above_s = options.reject_above_s();
  return resolved;
}

[[nodiscard]] absl::Status ValidateMeasureOptions(const proto::MeasureOptions& options) {
  return ResolveMeasureOptions(options).Validate();
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

}  // namespace tunefleet
