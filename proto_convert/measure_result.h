// The one conversion between the wire's measurement results
// (proto::TrialResult in fleet.proto, proto::RunResult in runner.proto) and
// the MeasureResult the tuners and records see (tuner_core/measure/measure.h).
// Use it wherever a result crosses that line: the tracker, the tuner process,
// the CLI, the local measurer.
//
//   MeasureResult m = ToMeasureResult(trial_update.result());
//   MeasureResult m = ToMeasureResult(runner->Run(request), now_unix_s);
//   proto::TrialResult r = ToTrialResult(agent_result.run(), now_unix_s);
//
// The same rules for both messages, since the wire may carry anything:
//   - an error code outside MeasureErrorNo becomes UNKNOWN;
//   - a success without costs is not one: UNKNOWN, "... success but no costs";
//   - a failure's costs are {1e9} (AutoTVM's convention in records);
//   - error_msg, all_cost and the timestamp are kept. A RunResult has no
//     all_cost: it is the runner's prepare + load + check + run seconds (the
//     caller adds build time); its timestamp is given by the caller.
#ifndef TUNEFLEET_PROTO_CONVERT_MEASURE_RESULT_H_
#define TUNEFLEET_PROTO_CONVERT_MEASURE_RESULT_H_

#include "proto/fleet.pb.h"
#include "proto/runner.pb.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

MeasureResult ToMeasureResult(const proto::TrialResult& result);
MeasureResult ToMeasureResult(const proto::RunResult& result, double timestamp_unix_s);

// Costs, error code and message, all_cost and timestamp of `result`; the
// TrialResult's other fields (build/measure seconds, builder, agent) are left
// for the caller.
proto::TrialResult ToTrialResult(const MeasureResult& result);
// ToTrialResult(ToMeasureResult(run, timestamp_unix_s)): an agent's answer as
// the fleet stores it.
proto::TrialResult ToTrialResult(const proto::RunResult& run, double timestamp_unix_s);

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_MEASURE_RESULT_H_
