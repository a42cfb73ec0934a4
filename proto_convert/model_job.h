// A model's tuning tasks as a fleet job (proto::JobSpec.tasks): one JobTask
// per distinct task of the model, weighted by the layers it serves, so the
// tracker, `tunefleet submit --model` and the benchmarks submit the same
// job for the same model.
//
//   TF_ASSIGN_OR_RETURN(LoadedModel model, LoadModel("resnet18.onnx", onnx));
//   proto::JobSpec spec = MakeModelJobSpec("resnet18.onnx", model.tasks,
//                                          "llvm -mcpu=native", {.trials_per_task = 64});
#ifndef TUNEFLEET_PROTO_CONVERT_MODEL_JOB_H_
#define TUNEFLEET_PROTO_CONVERT_MODEL_JOB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "proto/fleet.pb.h"
#include "tuner_core/models/model_zoo.h"

namespace tunefleet {

// One JobTask per model task, in order: the workload's default template,
// `target`, weight = layers served, name = the workload's description and
// its layer count.
std::vector<proto::JobTask> ModelJobTasks(const std::vector<ModelTask>& tasks,
                                          const std::string& target);

// A model job's trial ceiling under a time budget with no per-task cap (the
// tracker's default max_trials_per_job).
inline constexpr int64_t kModelTrialsUnderBudget = 1'000'000;
// Trials per task when none is given (and no budget decides).
inline constexpr int64_t kDefaultModelTrialsPerTask = 500;

// How a model job spends its budget.
struct ModelJobOptions {
  // 0 with a time budget: no per-task cap, the budget ends the search.
  int64_t trials_per_task = 1;
  std::string task_policy = "gradient";  // gradient | round_robin | sequential
  std::string selective;                 // "" off; "top3", "5%"
  double selective_threshold = 0.01;
  // Selective: trials each dependent goes on tuning after its top-k (0: none).
  int64_t selective_followup_trials = 0;
  // Schedule sharing between tasks of one template (JobSpec.share_schedules);
  // unset: on with the gradient policy.
  std::optional<bool> share_schedules;
  // Transfer between the tasks (JobSpec.transfer_between_tasks); unset: off.
  std::optional<bool> transfer_between_tasks;
  // A wall-clock budget for the search (JobSpec.time_budget_s); 0: none.
  double time_budget_s = 0;
};

// The spec of a model job for `tasks` on `target` (the rest of the spec,
// e.g. key, tuner, measure options, left to the caller): its tasks
// (ModelJobTasks), `model` as its name, n_trial = trials_per_task x tasks,
// and the policy. The gradient policy decides each task's share of the
// budget; the fixed policies and selective tuning give every tuned task
// trials_per_task. The one rule for `submit --model`, local
// `tune --model` and the benchmarks.
proto::JobSpec MakeModelJobSpec(const std::string& model, const std::vector<ModelTask>& tasks,
                                const std::string& target, const ModelJobOptions& options);

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_MODEL_JOB_H_
