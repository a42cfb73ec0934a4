// A tuning task: one template applied to one workload for one target, with
// its search space. What `tune` iterates over and what records are keyed by
// (task name = template name, workload args, target). A task that arrives
// as a proto::TaskSpec is made by TaskFromSpec (proto_convert/task_spec.h),
// which also checks the target string's grammar.
#ifndef TUNEFLEET_TUNER_CORE_TEMPLATES_TASK_H_
#define TUNEFLEET_TUNER_CORE_TEMPLATES_TASK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tuner_core/space/config_space.h"
#include "tuner_core/templates/template.h"
#include "tuner_core/workloads/workload.h"

namespace tunefleet {

class Task {
 public:
  // Empty template_name picks the workload's default template. Errors name
  // the unknown workload/template or the bad argument.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Task>> Make(
      const std::string& template_name, const std::string& workload_name,
      const nlohmann::json& workload_args, const std::string& target);

  const Template& tmpl() const { return *template_; }
  const Workload& workload() const { return *workload_; }
  const ConfigSpace& space() const { return space_; }
  const std::string& target() const { return target_; }
  const std::string& name() const { return template_->name(); }

 private:
  Task(const Template* tmpl, std::unique_ptr<Workload> workload, ConfigSpace space,
       std::string target)
      : template_(tmpl),
        workload_(std::move(workload)),
        space_(std::move(space)),
        target_(std::move(target)) {}

  const Template* template_;
  std::unique_ptr<Workload> workload_;
  ConfigSpace space_;
  std::string target_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TEMPLATES_TASK_H_
