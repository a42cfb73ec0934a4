// `tunefleet measure --log r.jsonl --key K`: re-measures recorded configs on
// the agents of device key K through the fleet, as `measure` without --key
// does on this host (local/measure_command.h). Per (task, workload, target)
// of the log (only --task's when given), its --top best records (TopPerTask)
// become one job: tuner "given" with their configs, each validated --passes
// times (every pass in a fresh runner child, passes of one config spread
// over the key's agents: tracker/validation.h). Printed per record: the
// recorded figure and which it is, the re-measured figure (median of the
// passes) with its spread, their ratio; per task, whether the key's agents
// agree. The log is not changed.
//
//   tunefleet measure --log r.jsonl --key rk3399 --top 3 --passes 5
#ifndef TUNEFLEET_CLI_MEASURE_FLEET_H_
#define TUNEFLEET_CLI_MEASURE_FLEET_H_

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "clients/cpp/fleet_client.h"
#include "proto/fleet.pb.h"
#include "tuner_core/records/remeasure_selection.h"

namespace tunefleet {

struct FleetMeasureOptions {
  RemeasureSelection records;     // --log, --top, --task, --passes
  std::string key;                // required: the device key whose agents measure
  proto::MeasureOptions measure;  // the search's options; the passes derive theirs
  double timeout_s = 3600;        // per job
};

// The records re-measured. InvalidArgument naming the flag for a missing
// --log or --key or --top / --passes out of range, and for a record whose
// config does not fit its template's space; the errors of ReadRecords;
// NotFound when the log has no successful record (of --task); the
// tracker's refusal of a job; Aborted naming the job when it does not
// succeed (e.g. no agent of the key connected for timeout_s / 2, at most
// 120 s); DeadlineExceeded after timeout_s.
[[nodiscard]] absl::StatusOr<int> RunFleetMeasure(FleetClient& client,
                                                  const FleetMeasureOptions& options,
                                                  std::ostream& progress, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_MEASURE_FLEET_H_
