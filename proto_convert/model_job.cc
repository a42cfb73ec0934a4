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

}  // namespace tunefleet
