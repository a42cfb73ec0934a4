#include "job_driver/trial_executor.h"

#include "common/status_macros.h"

namespace tunefleet {

[[nodiscard]] absl::Status Pump(JobRunner& runner, TrialExecutor& executor) {
  while (true) {
    const proto::ProposeTrials proposals = runner.NextProposals();
    if (proposals.configs_size() == 0 && !proposals.finished()) return absl::OkStatus();
    TF_ASSIGN_OR_RETURN(const bool answered, executor.Execute(runner, proposals));
    if (!answered || proposals.configs_size() == 0) return absl::OkStatus();
  }
}

}  // namespace tunefleet
