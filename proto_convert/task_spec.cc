#include "proto_convert/task_spec.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "target/target_string.h"

namespace tunefleet {
namespace {

std::string Abbreviate(const std::string& text, size_t limit = 200) {
  return text.size() <= limit ? text : absl::StrCat(text.substr(0, limit), "...");
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::unique_ptr<Task>> TaskFromSpec(const proto::TaskSpec& spec) {
  // proto3 cannot tell an empty string from an unset one: both mean no arguments.
  const std::string& args_text =
      spec.workload_args_json().empty() ? "{}" : spec.workload_args_json();
  const nlohmann::json args = nlohmann::json::parse(args_text, nullptr, /*allow_exceptions=*/false);
  if (args.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload_args_json is not valid JSON: ", Abbreviate(args_text)));
  }
  if (!args.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload_args_json is not a JSON object: ", Abbreviate(args_text)));
  }
  TF_RETURN_IF_ERROR(ParseTargetString(spec.target()).status());
  return Task::Make(spec.template_name(), spec.workload_name(), args, spec.target());
}

proto::TaskSpec MakeTaskSpec(const std::string& template_name, const std::string& workload_name,
                             const nlohmann::json& workload_args, const std::string& target) {
  proto::TaskSpec spec;
  spec.set_template_name(template_name);
  spec.set_workload_name(workload_name);
  spec.set_workload_args_json(workload_args.dump());
  spec.set_target(target);
  return spec;
}

[[nodiscard]] absl::Status CanonicalizeJobTasks(proto::JobSpec& spec) {
  if (!spec.has_task()) return absl::OkStatus();
  if (spec.tasks_size() > 0) {
    return absl::InvalidArgumentError(
        "a job gives either `task` (one task) or `tasks` (a model's), not both");
  }
  *spec.add_tasks()->mutable_task() = spec.task();
  spec.clear_task();
  return absl::OkStatus();
}

}  // namespace tunefleet
