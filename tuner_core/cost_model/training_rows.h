// The training rows of recorded trials: each record of one workload as the
// feature row of its config in that workload's space, with the throughput
// it measured. What the xgb tuner's history shapes (transfer learning) and
// the cost-model priors (tuner_core/pretuned/cost_model_prior.h) learn
// from, one workload at a time.
//
//   for (const WorkloadRecords& workload : GroupByWorkload(records)) {
//     absl::StatusOr<TrainingRows> rows = FeaturizeRecords(workload, FeatureKind::kItervar);
//     if (!rows.ok()) continue;            // its template or space cannot be made
//     model->Fit(rows->rows, rows->throughputs);
//   }
#ifndef TUNEFLEET_TUNER_CORE_COST_MODEL_TRAINING_ROWS_H_
#define TUNEFLEET_TUNER_CORE_COST_MODEL_TRAINING_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tuner_core/cost_model/xgb_cost_model.h"
#include "tuner_core/features/feature_extractor.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// The records of one workload of one template.
struct WorkloadRecords {
  std::string template_name;  // the records' task_name
  std::string workload_name;
  nlohmann::json workload_args;
  std::string target;                  // the first record's
  std::vector<const Record*> records;  // in the order given
};

// `records` (those `keep` accepts, when given) by (template, workload name,
// args), in the order first seen, so the same file always gives the same
// groups. The groups point into `records`.
std::vector<WorkloadRecords> GroupByWorkload(
    const std::vector<Record>& records, const std::function<bool(const Record&)>& keep = nullptr);

struct TrainingRows {
  std::unique_ptr<Task> task;       // the workload's task: its space and features
  FeatureMatrix rows;               // one per record whose config has a row
  std::vector<double> throughputs;  // each row's MeasureResult::Throughput() (0: failed)
  std::vector<size_t> used;         // each row's position in WorkloadRecords::records
  int64_t skipped = 0;              // records whose config is not of this space or has no row
};

// The rows of `workload`'s records with `feature` rows, computed on up to
// `threads` threads (the same rows for any count). The errors of Task::Make
// and FeatureExtractor::Create (a template or workload this build does not
// know); a record that does not fit is skipped and counted.
[[nodiscard]] absl::StatusOr<TrainingRows> FeaturizeRecords(const WorkloadRecords& workload,
                                                            FeatureKind feature, int threads = 1);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_COST_MODEL_TRAINING_ROWS_H_
