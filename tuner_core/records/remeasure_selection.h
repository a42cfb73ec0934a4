// What `tunefleet measure` re-measures, on this host (local/measure_command.h)
// or on a fleet key's agents (cli/measure_fleet.h): the top records per task
// of a log, read and checked once for both.
//
//   TF_ASSIGN_OR_RETURN(std::vector<TaskRecords> tasks,
//                       SelectRecordsToRemeasure({.log = "r.jsonl", .top = 5}, std::cerr));
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_REMEASURE_SELECTION_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_REMEASURE_SELECTION_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/measure/validation.h"
#include "tuner_core/records/best_record.h"

namespace tunefleet {

struct RemeasureSelection {
  std::string log;                        // --log (required)
  int top = kDefaultValidateTopK;         // --top: records per task, in [1, kMaxValidateTopK]
  std::string task;                       // --task: one template's records; empty: every task
  int passes = kDefaultValidationPasses;  // --passes, in [1, kMaxValidationPasses] (checked here)
};

// The log's TopPerTask(records, top, task); its read warnings go to
// `warnings`, one line each. InvalidArgument naming the flag for a missing
// --log or --top / --passes out of range; the errors of ReadRecords
// (NotFound for a missing log); NotFound when the log has no successful
// record (of --task, naming the log's tasks).
[[nodiscard]] absl::StatusOr<std::vector<TaskRecords>> SelectRecordsToRemeasure(
    const RemeasureSelection& selection, std::ostream& warnings);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_REMEASURE_SELECTION_H_
