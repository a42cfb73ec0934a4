#include "cli/measure_fleet.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "proto_convert/job_state.h"
#include "proto_convert/task_spec.h"
#include "tuner_core/records/remeasure_selection.h"

namespace tunefleet {
namespace {

// Polls `job_id` until it ends or `timeout_s` passes.
[[nodiscard]] absl::StatusOr<proto::JobStatus> WaitForEnd(FleetClient& client,
                                                          const std::string& job_id,
                                                          double timeout_s) {
  const Stopwatch waited;
  while (true) {
    TF_ASSIGN_OR_RETURN(proto::JobStatus status, client.Get(job_id));
    if (IsFinalJobState(status.state())) return status;
    if (waited.ElapsedSeconds() > timeout_s) {
      return absl::DeadlineExceededError(
          absl::StrCat("job ", job_id, " did not end within ", timeout_s, " s (",
                       status.validations_done(), " of ", status.validations_total(),
                       " re-measurements done); it goes on: cancel it with `tunefleet cancel`"));
    }
    SystemClock().SleepSeconds(0.25);
  }
}

}  // namespace

[[nodiscard]] absl::StatusOr<int> RunFleetMeasure(FleetClient& client,
                                                  const FleetMeasureOptions& options,
                                                  std::ostream& progress, std::ostream& out) {
  if (options.key.empty()) return absl::InvalidArgumentError("--key is required");
  TF_ASSIGN_OR_RETURN(std::vector<TaskRecords> groups,
                      SelectRecordsToRemeasure(options.records, out));
  out << "Re-measuring on the agents of key " << options.key << ": the top " << options.records.top
      << " records per task, " << options.records.passes
      << " passes each, every pass in a fresh runner child\n";
  int remeasured = 0;
  for (const TaskRecords& group : groups) {
    const Record& first = group.top.front();
    const proto::TaskSpec task_spec =
        MakeTaskSpec(first.task_name, first.workload_name, first.workload_args, first.target);
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, TaskFromSpec(task_spec));
    proto::JobSpec spec;
    spec.set_name(absl::StrCat("measure ", first.task_name, " ", task->workload().Describe()));
    spec.set_device_key(options.key);
    *spec.mutable_task() = task_spec;
    spec.set_tuner("given");
    TF_ASSIGN_OR_RETURN(std::vector<Config> configs,
                        TopConfigs(group, task->space(), options.records.log));
    for (const Config& config : configs) spec.add_given_configs(config.index());
    spec.set_n_trial(spec.given_configs_size());
    spec.set_validate_top_k(spec.given_configs_size());
    spec.set_validation_passes(options.records.passes);
    // A key with no agent fails the job (and the command) soon, saying so.
    spec.set_queue_timeout_s(std::min(options.timeout_s / 2, 120.0));
    *spec.mutable_measure() = options.measure;
    TF_ASSIGN_OR_RETURN(proto::JobStatus submitted, client.Submit(spec));
    progress << "job " << submitted.job_id() << ": " << spec.name() << " on key " << options.key
             << "\n";
    TF_ASSIGN_OR_RETURN(proto::JobStatus done,
                        WaitForEnd(client, submitted.job_id(), options.timeout_s));
    if (done.state() != proto::SUCCEEDED) {
      return absl::AbortedError(absl::StrCat(
          "job ", done.job_id(), " ", proto::JobState_Name(done.state()), ": ", done.message()));
    }
    TF_ASSIGN_OR_RETURN(std::vector<std::string> lines, client.Export(done.job_id()));
    std::map<int64_t, Record> measured;  // config index -> the job's record
    for (const std::string& line : lines) {
      absl::StatusOr<Record> r = Record::FromLine(line);
      if (!r.ok()) continue;
      absl::StatusOr<Config> config = task->space().FromJson(r->config);
      if (config.ok()) measured[config->index()] = *std::move(r);
    }
    const double flops = task->workload().flops();
    out << first.task_name << " " << task->workload().Describe() << " on \"" << first.target
        << "\" (top " << group.top.size() << " of " << group.successes
        << " successful records; job " << done.job_id() << ")\n";
    out << RemeasureTableHeader();
    for (size_t i = 0; i < group.top.size(); ++i) {
      const Record& recorded = group.top[i];
      const double recorded_gflops = flops / recorded.ReportedCost() / 1e9;
      const int64_t index = configs[i].index();
      auto it = measured.find(index);
      if (it == measured.end() || !it->second.validated()) {
        const std::string why = it == measured.end()      ? "not measured"
                                : !it->second.result.ok() ? it->second.result.error_msg
                                                          : "every pass failed";
        out << RemeasureTableFailure(index, recorded_gflops, recorded.validated(), why) << "\n";
        continue;
      }
      const Validation& v = *it->second.validation;
      out << RemeasureTableRow(index, recorded_gflops, recorded.validated(),
                               flops / v.cost_s() / 1e9, v.rel_spread())
          << "\n";
      ++remeasured;
    }
    if (!done.confirmation().empty()) out << "  agents: " << done.confirmation() << "\n";
  }
  out << "GFLOPS: recorded = the record's reported figure; re-measured = median of passes on "
         "the key's agents; spread = (max - min) / median over passes; ratio = re-measured / "
         "recorded\n";
  return remeasured;
}

}  // namespace tunefleet
