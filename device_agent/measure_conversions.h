// Translation between the tuner's measurement types (tuner_core/measure/
// measure.h) and the runner's wire messages (proto/runner.proto), in one
// place, for whoever drives a RunnerInterface: the local tuning loop and the
// agent's service.
//
//   proto::RunRequest request = MakeRunRequest(workload, artifact_bytes,
//                                              "dense_kernel", hash, options);
//   MeasureResult result = ToMeasureResult(runner->Run(request), now_unix_s);
//   result.all_cost += build_seconds;
#ifndef TUNEFLEET_DEVICE_AGENT_MEASURE_CONVERSIONS_H_
#define TUNEFLEET_DEVICE_AGENT_MEASURE_CONVERSIONS_H_

#include <string>

#include "proto/runner.pb.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

proto::MeasureOptions ToProto(const MeasureOptions& options);

// A request to measure `shared_object` (a CPU kernel artifact) exporting
// `entry_name`, for `workload` (its name and canonical args travel as JSON).
proto::RunRequest MakeRunRequest(const Workload& workload, std::string shared_object,
                                 std::string entry_name, std::string artifact_hash,
                                 const MeasureOptions& options);

// The result as the tuner and records see it: costs, or {1e9} when the run
// failed (AutoTVM's convention in records); error_no (UNKNOWN for a value
// outside MeasureErrorNo) and error_msg; all_cost = the runner's prepare +
// load + check + run seconds (the caller adds build time);
// `timestamp_unix_s` as given.
MeasureResult ToMeasureResult(const proto::RunResult& result, double timestamp_unix_s);

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_MEASURE_CONVERSIONS_H_
