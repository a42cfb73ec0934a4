// tunefleet tune: a local search of one workload (--workload with --shape or
// --args), or of every task of --model as one job (local/model_job.h).
#include <iostream>

#include "absl/flags/flag.h"
#include "cli/cli_commands.h"
#include "cli/model_command.h"
#include "cli/shared_flags.h"
#include "common/status_macros.h"
#include "local/model_job.h"
#include "local/tune_command.h"

ABSL_FLAG(int32_t, plan_size, 64, "xgb*: refit the cost model every plan_size results");
ABSL_FLAG(std::string, transfer_log, "",
          "xgb*: records of other shapes of the same template and target to warm-start the model");
ABSL_FLAG(bool, resume, true,
          "skip configs already recorded in --log (one kernel); with --model the log's trials "
          "of its tasks count as done, so an interrupted job finishes instead of starting over");

namespace tunefleet {

[[nodiscard]] absl::Status TuneCli(const CliArgs&) {
  TuneCommandOptions o = LocalSearchFromFlags();
  o.workload = absl::GetFlag(FLAGS_workload);
  o.shape = absl::GetFlag(FLAGS_shape);
  o.layout = absl::GetFlag(FLAGS_layout);
  o.template_name = absl::GetFlag(FLAGS_template_name);
  TF_ASSIGN_OR_RETURN(o.args, ArgsFromFlag());
  o.plan_size = absl::GetFlag(FLAGS_plan_size);
  o.transfer_log = absl::GetFlag(FLAGS_transfer_log);
  o.log = absl::GetFlag(FLAGS_log);
  o.resume = absl::GetFlag(FLAGS_resume);
  const std::string model = absl::GetFlag(FLAGS_model);
  if (model.empty()) return RunTune(o, std::cerr, std::cout).status();
  TF_ASSIGN_OR_RETURN(const OnnxImportOptions onnx, OnnxOptionsFromFlag());
  TF_ASSIGN_OR_RETURN(ModelJobOptions job, ModelJobFromFlags());
  // A plain `tune --model` tunes each task in turn (AutoTVM's tune_tasks);
  // a policy, selective tuning or a time budget makes the task scheduler
  // spread the trials (the gradient policy unless one is named).
  const bool scheduled = !absl::GetFlag(FLAGS_task_policy).empty() ||
                         !absl::GetFlag(FLAGS_selective).empty() ||
                         absl::GetFlag(FLAGS_time_budget) != absl::ZeroDuration();
  if (!scheduled) job.task_policy = "sequential";
  return RunTuneModelJob(model, onnx, o, job, std::cerr, std::cout).status();
}

}  // namespace tunefleet
