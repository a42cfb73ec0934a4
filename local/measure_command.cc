#include "local/measure_command.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "kernel_runtime/device_info.h"
#include "local/validate_winners.h"
#include "proto_convert/task_spec.h"
#include "target/host.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/records/remeasure_selection.h"

namespace tunefleet {
namespace {

// OK when this host can run what `target` builds; FailedPrecondition saying
// why not otherwise.
[[nodiscard]] absl::Status CheckRunnableHere(const std::string& target,
                                             const RunnerOptions& runner) {
  absl::StatusOr<TargetSpec> spec = ParseTarget(target);
  if (!spec.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "record target \"", target, "\" cannot be built here: ", spec.status().message()));
  }
  if (spec->is_cuda()) {
    absl::StatusOr<GpuDeviceProperties> gpu =
        DetectGpu(runner.gpu_device,
                  runner.cuda_driver_library.empty() ? kLibCudaName : runner.cuda_driver_library);
    if (!gpu.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("record target \"", target,
                                                        "\" is a GPU target and this host has "
                                                        "no usable GPU: ",
                                                        gpu.status().message()));
    }
    return absl::OkStatus();
  }
  const Arch* host = HostArch();
  if (spec->arch != host) {
    return absl::FailedPreconditionError(
        absl::StrCat("record target \"", target, "\" builds ", spec->arch->name(),
                     " code, which this ", host == nullptr ? "undescribed" : host->name(),
                     " host cannot run; measure it on a ", spec->arch->name(), " host"));
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::vector<RemeasuredRecord>> RunMeasure(
    const MeasureCommandOptions& options, std::ostream& progress, std::ostream& out) {
  TF_ASSIGN_OR_RETURN(std::vector<TaskRecords> groups,
                      SelectRecordsToRemeasure(options.records, out));
  // Refuse what this host cannot run before measuring anything.
  for (const TaskRecords& g : groups) {
    TF_RETURN_IF_ERROR(CheckRunnableHere(g.top.front().target, options.local.runner));
  }

  out << "Re-measuring on this host: the top " << options.records.top << " records per task, "
      << options.records.passes << " passes each, every measurement in a fresh runner child\n";
  std::vector<RemeasuredRecord> remeasured;
  for (const TaskRecords& g : groups) {
    const Record& first = g.top.front();
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task,
                        TaskFromSpec(MakeTaskSpec(first.task_name, first.workload_name,
                                                  first.workload_args, first.target)));
    const std::vector<Record>& top = g.top;
    TF_ASSIGN_OR_RETURN(std::vector<Config> configs,
                        TopConfigs(g, task->space(), options.records.log));
    const double flops = task->workload().flops();
    const std::string workload = task->workload().Describe();
    progress << "measuring " << configs.size() << " configs of " << first.task_name << " "
             << workload << "\n";
    TF_ASSIGN_OR_RETURN(std::unique_ptr<LocalMeasurer> measurer,
                        LocalMeasurer::Create(*task, options.local));
    TF_ASSIGN_OR_RETURN(LocalValidationRun run,
                        measurer->Validate(configs, options.records.passes));

    out << first.task_name << " " << workload << " on \"" << first.target << "\" (top "
        << top.size() << " of " << g.successes << " successful records)\n";
    out << RemeasureTableHeader();
    for (size_t i = 0; i < top.size(); ++i) {
      RemeasuredRecord row;
      row.task_name = first.task_name;
      row.workload = workload;
      row.target = first.target;
      row.config_index = configs[i].index();
      row.recorded_gflops = flops / top[i].ReportedCost() / 1e9;
      row.recorded_validated = top[i].validated();
      row.remeasured = run.validations[i];
      row.last_error = run.last_errors[i];
      if (row.remeasured.ok()) {
        row.remeasured_gflops = flops / row.remeasured.cost_s() / 1e9;
        row.ratio = row.remeasured_gflops / row.recorded_gflops;
        out << RemeasureTableRow(row.config_index, row.recorded_gflops, row.recorded_validated,
                                 row.remeasured_gflops, row.remeasured.rel_spread());
        if (row.remeasured.failed_passes > 0) {
          out << "  (" << row.remeasured.failed_passes << " passes failed: " << row.last_error
              << ")";
        }
      } else {
        out << RemeasureTableFailure(
            row.config_index, row.recorded_gflops, row.recorded_validated,
            absl::StrCat(DescribeValidation(row.remeasured), ": ", row.last_error));
      }
      out << "\n";
      remeasured.push_back(std::move(row));
    }
  }
  out << "GFLOPS: recorded = the record's reported figure; re-measured = median of passes; "
         "spread = (max - min) / median over passes; ratio = re-measured / recorded\n";
  return remeasured;
}

}  // namespace tunefleet
