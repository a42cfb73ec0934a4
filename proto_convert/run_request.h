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

#include "absl/status/status.h"
#include "proto/runner.pb.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

// Every field of `options`, same names and units, all set explicitly
// (max_repeat only when non-zero).
proto::MeasureOptions ToProto(const MeasureOptions& options);

// The one place where the wire's measure options get their defaults: each
// unset optional field takes MeasureOptions{}'s value (number 4, repeat 3,
// cooldown 0.1 s, timeout 10 s, check_correctness true, input_seed 1,
// max_repeat 0 = repeat, target_rel_ci 0 = off); a field set explicitly
// keeps its value, even 0 or false. Does not validate.
MeasureOptions ResolveMeasureOptions(const proto::MeasureOptions& options);

// ResolveMeasureOptions(options).Validate(): InvalidArgument naming the bad
// field, e.g. a timeout above kMaxMeasureTimeoutS (600 s), "measure option
// timeout_s = 900 is invalid: exceeds the cap of 600 s per measurement".
// For the tracker's job submission, local tuning and the runner.
[[nodiscard]] absl::Status ValidateMeasureOptions(const proto::MeasureOptions& options);

// A request to measure `shared_object` (a kernel artifact) exporting
// `entry_name`, for `workload` (its name and canonical args travel as JSON).
proto::RunRequest MakeRunRequest(const Workload& workload, std::string shared_object,
                                 std::string entry_name, std::string artifact_hash,
                                 const MeasureOptions& options);

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_RUN_REQUEST_H_
