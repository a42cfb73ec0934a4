#include "proto_convert/model_job.h"

#include "absl/strings/str_cat.h"
#include "proto_convert/task_spec.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

std::vector<proto::JobTask> ModelJobTasks(const std::vector<ModelTask>& tasks,
                                          const std::string& target) {
  std::vector<proto::JobTask> out;
  out.reserve(tasks.size());
  for (const ModelTask& task : tasks) {
    proto::JobTask& t = out.emplace_back();
    *t.mutable_task() = MakeTaskSpec("", task.workload, task.args, target);
    t.set_weight(task.num_layers);
    absl::StatusOr<std::unique_ptr<Workload>> workload = MakeWorkload(task.workload, task.args);
    t.set_name(absl::StrCat(workload.ok() ? (*workload)->Describe() : task.workload, " x",
                            task.num_layers));
  }
  return out;
}

proto::JobSpec MakeModelJobSpec(const std::string& model, const std::vector<ModelTask>& tasks,
                                const std::string& target, const ModelJobOptions& options) {
  proto::JobSpec spec;
  for (proto::JobTask& t : ModelJobTasks(tasks, target)) *spec.add_tasks() = std::move(t);
  spec.set_model(model);
  // Under a time budget with no per-task cap the gradient policy's
  // budget alone ends the search (n_trial is then only the scheduler's
  // ceiling); the policies that count trials per task get the default cap.
  const bool per_task = options.task_policy != "gradient" || !options.selective.empty();
  const bool uncapped = options.trials_per_task <= 0 && options.time_budget_s > 0;
  const int64_t trials_per_task =
      options.trials_per_task > 0 ? options.trials_per_task : kDefaultModelTrialsPerTask;
  spec.set_n_trial(uncapped && !per_task ? kModelTrialsUnderBudget
                                         : trials_per_task * spec.tasks_size());
  spec.set_task_policy(options.task_policy);
  if (per_task) spec.set_trials_per_task(trials_per_task);
  spec.set_selective(options.selective);
  spec.set_selective_threshold(options.selective_threshold);
  if (options.share_schedules.has_value()) spec.set_share_schedules(*options.share_schedules);
  if (options.transfer_between_tasks.has_value()) {
    spec.set_transfer_between_tasks(*options.transfer_between_tasks);
  }
  if (options.selective_followup_trials > 0) {
    spec.set_selective_followup_trials(options.selective_followup_trials);
  }
  if (options.time_budget_s > 0) spec.set_time_budget_s(options.time_budget_s);
  return spec;
}

}  // namespace tunefleet
