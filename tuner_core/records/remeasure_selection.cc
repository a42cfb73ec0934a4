#include "tuner_core/records/remeasure_selection.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "tuner_core/measure/validation.h"
#include "tuner_core/records/record_file.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<std::vector<TaskRecords>> SelectRecordsToRemeasure(
    const RemeasureSelection& selection, std::ostream& warnings) {
  if (selection.log.empty()) return absl::InvalidArgumentError("--log is required");
  if (selection.top < 1 || selection.top > kMaxValidateTopK) {
    return absl::InvalidArgumentError(
        absl::StrCat("--top must be in [1, ", kMaxValidateTopK, "], not ", selection.top));
  }
  if (selection.passes < 1 || selection.passes > kMaxValidationPasses) {
    return absl::InvalidArgumentError(absl::StrCat("--passes must be in [1, ", kMaxValidationPasses,
                                                   "], not ", selection.passes));
  }
  TF_ASSIGN_OR_RETURN(ReadReport report, ReadRecords(selection.log));
  for (const std::string& w : report.warnings) warnings << "warning: " << w << "\n";
  std::vector<TaskRecords> tasks = TopPerTask(report.records, selection.top, selection.task);
  if (!tasks.empty()) return tasks;
  std::set<std::string> task_names;
  for (const Record& r : report.records) {
    if (r.result.ok()) task_names.insert(r.task_name);
  }
  if (!selection.task.empty()) {
    return absl::NotFoundError(
        absl::StrCat("--task ", selection.task, ": no successful record of it in ", selection.log,
                     task_names.empty() ? "" : "; its tasks: ", absl::StrJoin(task_names, ", ")));
  }
  return absl::NotFoundError(
      absl::StrCat(selection.log, ": no successful record among ", report.records.size()));
}

}  // namespace tunefleet
