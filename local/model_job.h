// Local mode's one job driver: the JobRunner the tuner process runs (task
// scheduler, selective tuning, known trials), fed by local builds and
// measurements instead of the tracker, so `tunefleet tune --model ...`
// spends its budget exactly as `submit --model` with the same options would
// (plain `tune --model` is the sequential policy: each task in turn).
//
//   proto::JobSpec spec = ...;   // tasks from ModelJobTasks, policy, selective
//   TF_ASSIGN_OR_RETURN(LocalModelSummary s,
//                       RunLocalModelJob(spec, measurer_options, "r.jsonl", std::cerr,
//                                        {.pretuned = &shipped, .resume = true}));
//
// Each task measures its default config first (toolchain/
// default_config.h: what an untuned compile runs), so its best record is
// never worse than that. Trials are measured in the runner's window order,
// one batch per task at a time (built in parallel, then measured one by one, as local `tune`); each
// result is appended to the log before the runner hears of it.
//
// After the search, each task's winners are validated as local `tune`
// validates them (local/validate_winners.h, options.validation): the task's
// best and the estimated latency use the validated costs where there are
// some, and the log's lines of the validated configs get their
// "validation" objects (rewritten atomically, local/validation_log.h).
#ifndef TUNEFLEET_LOCAL_MODEL_JOB_H_
#define TUNEFLEET_LOCAL_MODEL_JOB_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "local/local_measurer.h"
#include "proto/fleet.pb.h"
#include "tuner_core/pretuned/pretuned_records.h"
#include "tuner_core/records/record.h"

namespace tunefleet {

// What a local job knows beyond its spec.
struct LocalJobSetup {
  // Each task measures first the configs these have for it (a warm start);
  // null: cold.
  const PretunedRecords* pretuned = nullptr;
  // The records of the job's tasks already in the log (same task, target and
  // arguments) are the job's done trials, as a fleet job's known trials are
  // when a tuner takes it over: they are not measured again, the tuners and
  // the task scheduler learn them, and they count toward the budget, so an
  // interrupted job run again finishes instead of starting over.
  bool resume = false;
  // xgb*: records of other shapes to warm-start each task's cost model
  // (JobRunner::TunerSetup::history).
  std::vector<Record> transfer_history;
};

struct LocalModelSummary {
  int64_t trials = 0;  // measured by this run (resumed ones not included)
  std::vector<int64_t> trials_per_task;
  std::vector<int64_t> resumed_per_task;  // done trials taken from the log
  // Per task: the reported best, validated where a validation pass
  // succeeded, else the search's; 0 when none worked.
  std::vector<double> best_cost_s;
  std::vector<double> search_best_cost_s;  // per task: the search's best; 0 when none worked
  std::vector<bool> validated;             // per task: best_cost_s is a validated cost
  std::vector<int> validation_passes;      // per task: successful passes of the validated best
  std::vector<double> validation_spread;   // per task: their (max - min) / median
  double estimated_latency_s = 0;          // sum over tasks of weight x best_cost_s
  int untuned_tasks = 0;
  int validated_lines = 0;  // lines of the log given a "validation" object
  double wall_seconds = 0;
  LocalTimings timings;  // summed over the tasks' measurers
};

// Runs the job `spec` (its tasks, n_trial, tuner, task_policy, selective)
// locally, then validates each task's winners (options.validation), with
// the candidates of the resumed trials too. Records go to `log` when it is
// not empty. Each task measures first what setup.pretuned has for it, then
// its default config.
// InvalidArgument naming the flag for bad validation options; the errors
// of JobRunner::Create, LocalMeasurer::Create, reading the log to resume
// (a missing log is an empty one), the record writer and the log's rewrite.
[[nodiscard]] absl::StatusOr<LocalModelSummary> RunLocalModelJob(
    const proto::JobSpec& spec, const LocalMeasurerOptions& options, const std::string& log,
    std::ostream& progress, const LocalJobSetup& setup = LocalJobSetup());

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_MODEL_JOB_H_
