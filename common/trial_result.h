// The fleet's trial result (proto::TrialResult) as the tuners and records
// see it (tuner_core/measure/measure.h). One conversion, shared by the
// tracker, the tuner process and the CLI.
#ifndef TUNEFLEET_COMMON_TRIAL_RESULT_H_
#define TUNEFLEET_COMMON_TRIAL_RESULT_H_

#include "proto/fleet.pb.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

// Costs, error code (a value outside MeasureErrorNo stays as given; records
// and tuners treat any non-zero code as a failure), message, all_cost and
// timestamp.
MeasureResult ToMeasureResult(const proto::TrialResult& result);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_TRIAL_RESULT_H_
