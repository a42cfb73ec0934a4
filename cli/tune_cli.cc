// tunefleet tune: a local search of one workload (--workload with --shape or
// --args), of every task of --model, or of --model as one job.
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
ABSL_FLAG(bool, resume, true, "skip configs already recorded in --log for this task");

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
  const bool as_job = !absl::GetFlag(FLAGS_task_policy).empty() ||
                      !absl::GetFlag(FLAGS_selective).empty() ||
                      absl::GetFlag(FLAGS_time_budget) != absl::ZeroDuration();
  if (!as_job) return RunTuneModel(model, onnx, o, std::cerr, std::cout).status();
  TF_ASSIGN_OR_RETURN(const ModelJobOptions job, ModelJobFromFlags());
  return RunTuneModelJob(model, onnx, o, job, std::cerr, std::cout).status();
}

}  // namespace tunefleet
