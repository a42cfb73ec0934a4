// Local mode for a whole model with the fleet's model-job logic: the same
// JobRunner the tuner process runs (task scheduler, selective tuning), fed
// by local builds and measurements instead of the tracker, so `tunefleet
// tune --model ... --task_policy gradient --selective=top3` spends its
// budget exactly as `submit --model` with the same options would.
//
//   proto::JobSpec spec = ...;   // tasks from ModelJobTasks, policy, selective
//   TF_ASSIGN_OR_RETURN(LocalModelSummary s,
//                       RunLocalModelJob(spec, measurer_options, "r.jsonl", std::cerr));
//
// Trials are measured in the runner's window order, one batch per task at a
// time (built in parallel, then measured one by one, as local `tune`); each
// result is appended to the log before the runner hears of it.
#ifndef TUNEFLEET_LOCAL_MODEL_JOB_H_
#define TUNEFLEET_LOCAL_MODEL_JOB_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "local/local_measurer.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

struct LocalModelSummary {
  int64_t trials = 0;
  std::vector<int64_t> trials_per_task;
  std::vector<double> best_cost_s;  // per task; 0 when none worked
  double estimated_latency_s = 0;   // sum over tasks of weight x best
  int untuned_tasks = 0;
  double wall_seconds = 0;
};

// Runs the model job `spec` (its tasks, n_trial, tuner, task_policy,
// selective) locally. Records go to `log` when it is not empty. The errors
// of JobRunner::Create, LocalMeasurer::Create and the record writer.
[[nodiscard]] absl::StatusOr<LocalModelSummary> RunLocalModelJob(
    const proto::JobSpec& spec, const LocalMeasurerOptions& options, const std::string& log,
    std::ostream& progress);

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_MODEL_JOB_H_
