// A tuning task to and from the wire (proto::TaskSpec): the one place where a
// spec becomes a Task, for every process that rebuilds one (the tracker when
// a job is submitted or reloaded, the builder per request, the tuner process
// per job, local `tune`), so all of them accept and refuse the same specs.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, TaskFromSpec(request.task()));
//   proto::TaskSpec spec = MakeTaskSpec("", "dense", {{"M", 64}, ...}, "llvm -mcpu=native");
//   TF_RETURN_IF_ERROR(CanonicalizeJobTasks(job_spec));   // `task` -> `tasks`
#ifndef TUNEFLEET_PROTO_CONVERT_TASK_SPEC_H_
#define TUNEFLEET_PROTO_CONVERT_TASK_SPEC_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "proto/fleet.pb.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// InvalidArgument when workload_args_json is not a JSON object (empty means
// {}), when the target string does not follow the grammar of
// target/target_string.h, or when Task::Make refuses the template, workload
// or arguments (its message names which). Whether LLVM knows the target's CPU
// is left to the builder.
[[nodiscard]] absl::StatusOr<std::unique_ptr<Task>> TaskFromSpec(const proto::TaskSpec& spec);

// The spec of a task: empty template_name means the workload's default.
proto::TaskSpec MakeTaskSpec(const std::string& template_name, const std::string& workload_name,
                             const nlohmann::json& workload_args, const std::string& target);

// A job's spec in canonical form: a one-task `task` moved into `tasks` (and
// cleared). InvalidArgument when both are given.
[[nodiscard]] absl::Status CanonicalizeJobTasks(proto::JobSpec& spec);

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_TASK_SPEC_H_
