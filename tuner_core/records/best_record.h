// Picking winners from tuning records: the best config of one workload on one
// target (what "apply history best" and `tunefleet best` answer), and the best
// of every (task, workload, target) in a log.
//
// Only NO_ERROR records compete. A validated record (one of its job's
// top-k, re-measured: record.h) beats every unvalidated one, whose search
// figure is the luck of the draw; within each class the lower
// ReportedCost() wins (the validated cost, or the search's MeanCost()), and
// on a tie the earlier record wins (so the answer does not depend on later
// duplicates).
#ifndef TUNEFLEET_TUNER_CORE_RECORDS_BEST_RECORD_H_
#define TUNEFLEET_TUNER_CORE_RECORDS_BEST_RECORD_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tuner_core/records/record.h"

namespace tunefleet {

// The fastest successful record matching every given filter: `task_name`
// (empty = any), `workload_args` (null = any; compared as JSON values, so key
// order does not matter) and `target` (empty = any). NotFound when no
// successful record matches.
[[nodiscard]] absl::StatusOr<Record> BestRecord(const std::vector<Record>& records,
                                                const std::string& task_name,
                                                const nlohmann::json* workload_args,
                                                const std::string& target);

// The fastest successful record of each distinct (task_name, workload_name,
// workload_args, target), in the order each group first appears. Groups with
// no successful record are left out.
std::vector<Record> BestPerTask(const std::vector<Record>& records);

// The successful records of one (task_name, workload_name, workload_args,
// target) of a log: its `k` best (the order above: validated first, then by
// ReportedCost, then file order), one per config, and how many it has.
struct TaskRecords {
  std::vector<Record> top;
  int64_t successes = 0;
};
// The TaskRecords of every group with a successful record (only task
// `task_name`'s when not empty), in the order each group first appears;
// k >= 1. What `tunefleet measure` re-measures.
std::vector<TaskRecords> TopPerTask(const std::vector<Record>& records, int k,
                                    const std::string& task_name = "");

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_RECORDS_BEST_RECORD_H_
