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

}  // namespace tunefleet
