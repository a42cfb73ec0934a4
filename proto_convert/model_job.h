// A model's tuning tasks as a fleet job (proto::JobSpec.tasks): one JobTask
// per distinct task of the model, weighted by the layers it serves, so the
// tracker, `tunefleet submit --model` and the benchmarks submit the same
// job for the same model.
//
//   TF_ASSIGN_OR_RETURN(LoadedModel model, LoadModel("resnet18.onnx", onnx));
//   for (proto::JobTask& t : ModelJobTasks(model.tasks, "llvm -mcpu=native"))
//     *spec.add_tasks() = std::move(t);
#ifndef TUNEFLEET_PROTO_CONVERT_MODEL_JOB_H_
#define TUNEFLEET_PROTO_CONVERT_MODEL_JOB_H_

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

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_MODEL_JOB_H_
