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
#include "tuner_core/space/config_space.h"

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

// The configs of `task.top` in `space`, in order. InvalidArgument naming
// `log`, the task and the config when one does not fit the space.
[[nodiscard]] absl::StatusOr<std::vector<Config>> TopConfigs(const TaskRecords& task,
                                                             const ConfigSpace& space,
                                                             const std::string& log);

// The table `measure` prints for each task, on this host or on the fleet:
// the header line, and a row (without newline) for a re-measured record or
// for one that could not be re-measured (`why`).
std::string RemeasureTableHeader();
std::string RemeasureTableRow(int64_t config_index, double recorded_gflops, bool recorded_validated,
                              double remeasured_gflops, double rel_spread);
std::string RemeasureTableFailure(int64_t config_index, double recorded_gflops,
                                  bool recorded_validated, const std::string& why);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_REMEASURE_SELECTION_H_
