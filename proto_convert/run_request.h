// The runner's request (proto/runner.proto) from the tuner's types: the time
// evaluator settings (tuner_core/measure/measure.h) and the workload
// (tuner_core/workloads/workload.h). For whoever drives a RunnerInterface
// (the local tuning loop) and for the tracker's default measure options.
//
//   proto::RunRequest request = MakeRunRequest(workload, artifact_bytes,
//                                              "tf_dense_pack_x86", hash, options);
//   MeasureResult result = ToMeasureResult(runner->Run(request), now_unix_s);  // measure_result.h
#ifndef TUNEFLEET_PROTO_CONVERT_RUN_REQUEST_H_
#define TUNEFLEET_PROTO_CONVERT_RUN_REQUEST_H_

#include <string>

#include "proto/runner.pb.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

// Every field of `options`, same names and units.
proto::MeasureOptions ToProto(const MeasureOptions& options);

// A request to measure `shared_object` (a kernel artifact) exporting
// `entry_name`, for `workload` (its name and canonical args travel as JSON).
proto::RunRequest MakeRunRequest(const Workload& workload, std::string shared_object,
                                 std::string entry_name, std::string artifact_hash,
                                 const MeasureOptions& options);

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_RUN_REQUEST_H_
