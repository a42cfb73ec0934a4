#include "tuner_core/records/remeasure_selection.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
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

[[nodiscard]] absl::StatusOr<std::vector<Config>> TopConfigs(const TaskRecords& task,
                                                             const ConfigSpace& space,
                                                             const std::string& log) {
  std::vector<Config> configs;
  for (const Record& r : task.top) {
    absl::StatusOr<Config> config = space.FromJson(r.config);
    if (!config.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(log, ": a config of ", task.top.front().task_name, " ", r.config.dump(),
                       " does not fit the template's space: ", config.status().message()));
    }
    configs.push_back(*std::move(config));
  }
  return configs;
}

std::string RemeasureTableHeader() {
  return absl::StrFormat("  %-10s %12s %-10s %15s %8s %7s\n", "config", "recorded", "figure",
                         "re-measured", "spread", "ratio");
}

std::string RemeasureTableRow(int64_t config_index, double recorded_gflops, bool recorded_validated,
                              double remeasured_gflops, double rel_spread) {
  return absl::StrFormat("  %-10d %12.2f %-10s %15.2f %6.1f %% %7.3f", config_index,
                         recorded_gflops, recorded_validated ? "validated" : "search",
                         remeasured_gflops, 100 * rel_spread, remeasured_gflops / recorded_gflops);
}

std::string RemeasureTableFailure(int64_t config_index, double recorded_gflops,
                                  bool recorded_validated, const std::string& why) {
  return absl::StrFormat("  %-10d %12.2f %-10s %s", config_index, recorded_gflops,
                         recorded_validated ? "validated" : "search", why);
}

}  // namespace tunefleet
