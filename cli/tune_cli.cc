// tunefleet tune: a local search of one workload (--workload with --shape or
// --args) or of every task of --model, as one job (local/tune_command.h).
#include <iostream>

#include "absl/flags/flag.h"
#include "cli/cli_commands.h"
#include "cli/shared_flags.h"
#include "common/status_macros.h"
#include "local/tune_command.h"
#include "toolchain/codegen/target.h"

ABSL_FLAG(std::string, transfer_log, "",
          "xgb*: records of other shapes of the same template and target to warm-start the model");
ABSL_FLAG(bool, resume, true,
          "the trials already in --log of the job's tasks count as done, so an interrupted "
          "job finishes instead of starting over");

namespace tunefleet {

[[nodiscard]] absl::Status TuneCli(const CliArgs&) {
  // A plain `tune --model` tunes each task in turn (AutoTVM's tune_tasks);
  // a policy, selective tuning or a time budget makes the task scheduler
  // spread the trials (the gradient policy unless one is named).
  const bool scheduled = !absl::GetFlag(FLAGS_task_policy).empty() ||
                         !absl::GetFlag(FLAGS_selective).empty() ||
                         absl::GetFlag(FLAGS_time_budget) != absl::ZeroDuration();
  TF_ASSIGN_OR_RETURN(proto::JobSpec spec,
                      JobSpecFromFlags({.target = HostTargetString(),
                                        .task_policy = scheduled ? "gradient" : "sequential"}));
  spec.set_window(absl::GetFlag(FLAGS_batch));
  LocalRunOptions run = LocalRunFromFlags();
  run.resume = absl::GetFlag(FLAGS_resume);
  run.transfer_log = absl::GetFlag(FLAGS_transfer_log);
  return RunTune(spec, run, std::cerr, std::cout).status();
}

}  // namespace tunefleet
