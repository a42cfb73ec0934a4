// `tunefleet measure`: re-measures recorded configs on this host, each
// measurement in a fresh runner child, the way validated winners are
// measured (tuner_core/measure/validation.h), to check whether a recorded
// figure holds up:
//
//   tunefleet measure --log r.jsonl [--top 5] [--task dense_pack.x86] [--passes 3]
//
// For each (task, workload, target) of the log, in the order each first
// appears (only task --task when given), the --top successful records by
// ReportedCost (one per config) are built for the record's target and
// measured --passes times each with ValidationMeasureOptions of the given
// measure options, in ValidationOrder. Per record it prints the config
// index, the recorded GFLOPS and which figure that is (validated or
// search), the re-measured GFLOPS (median of passes) with its spread, and
// re-measured / recorded. The log is not changed.
//
// Re-measuring on the agents of a fleet key (--key) is cli/measure_fleet.h,
// over the same selection of records (TopPerTask).
#ifndef TUNEFLEET_LOCAL_MEASURE_COMMAND_H_
#define TUNEFLEET_LOCAL_MEASURE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "local/local_measurer.h"
#include "tuner_core/measure/validation.h"
#include "tuner_core/records/remeasure_selection.h"

namespace tunefleet {

struct MeasureCommandOptions {
  RemeasureSelection records;  // --log, --top, --task, --passes
  // measure: the search-like options the passes' options derive from;
  // runner: the child's. `validation` is not used.
  LocalMeasurerOptions local;
};

struct RemeasuredRecord {
  std::string task_name;
  std::string workload;  // Describe()
  std::string target;
  int64_t config_index = 0;
  double recorded_gflops = 0;  // of the record's ReportedCost
  bool recorded_validated = false;
  Validation remeasured;
  double remeasured_gflops = 0;  // of remeasured.cost_s(); 0 when no pass succeeded
  double ratio = 0;              // remeasured_gflops / recorded_gflops
  std::string last_error;        // the last failed pass's error, if any
};

// Runs the command; the table goes to `out`, progress to `progress`.
// InvalidArgument naming the flag for a missing --log or --top / --passes
// out of range, and for a record whose config does not fit its template's
// space; the errors of ReadRecords (NotFound for a
// missing log); NotFound when the log has no successful record (of --task,
// naming the log's tasks); FailedPrecondition naming the target when a
// selected record's target is not one this host can run (another
// architecture, or CUDA without a usable GPU), before anything is
// measured; the errors of LocalMeasurer.
[[nodiscard]] absl::StatusOr<std::vector<RemeasuredRecord>> RunMeasure(
    const MeasureCommandOptions& options, std::ostream& progress, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_MEASURE_COMMAND_H_
