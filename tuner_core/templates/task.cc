#include "tuner_core/templates/task.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {

absl::StatusOr<std::unique_ptr<Task>> Task::Make(const std::string& template_name,
                                                 const std::string& workload_name,
                                                 const nlohmann::json& workload_args,
                                                 const std::string& target) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Workload> workload,
                      MakeWorkload(workload_name, workload_args));
  const Template* tmpl = nullptr;
  if (template_name.empty()) {
    TF_ASSIGN_OR_RETURN(tmpl, DefaultTemplateFor(*workload, target));
  } else {
    TF_ASSIGN_OR_RETURN(tmpl, FindTemplate(template_name));
  }
  if (tmpl->workload_name() != workload_name) {
    return absl::InvalidArgumentError(absl::StrCat("template ", tmpl->name(), " computes ",
                                                   tmpl->workload_name(), ", not ", workload_name));
  }
  TF_ASSIGN_OR_RETURN(ConfigSpace space, tmpl->DefineSpace(*workload));
  return std::unique_ptr<Task>(new Task(tmpl, std::move(workload), std::move(space), target));
}

}  // namespace tunefleet
