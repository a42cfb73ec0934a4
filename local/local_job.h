// Local mode's one job driver: the JobRunner the tuner process runs (task
// scheduler, selective tuning, known trials), fed by local builds and
// measurements instead of the tracker. A job of one kernel and a model's
// job are the same path, so `tunefleet tune` spends its budget exactly as
// `submit` of the same spec would:
//
//   proto::JobSpec spec = ...;   // what to tune: JobSpecFromFlags, or set by hand
//   TF_ASSIGN_OR_RETURN(LocalJobSummary s,
//                       RunLocalJob(spec, host, "r.jsonl", std::cerr,
//                                   {.pretuned = &shipped, .resume = true}));
//
// The spec says everything about the job: its tasks, n_trial, tuner, seed,
// window (the build batch), task_policy, selective, the time evaluator
// settings (spec.measure) and the validation (validate_top_k,
// validation_passes). `host` says how this machine builds and runs it
// (runner threads, one runner child or one per task, the clock); its
// `measure` and `validation` are not read.
//
// Each task measures its default config first (toolchain/
// default_config.h: what an untuned compile runs), so its best record is
// never worse than that. Trials are measured in the runner's window order,
// one batch per task at a time (built in parallel, then measured one by
// one); each result is appended to the log before the runner hears of it.
//
// After the search, each task's winners are validated (local/
// validate_winners.h): the task's best and the estimated latency use the
// validated costs where there are some, and the log's lines of the
// validated configs get their "validation" objects (rewritten atomically,
// local/validation_log.h).
#ifndef TUNEFLEET_LOCAL_LOCAL_JOB_H_
#define TUNEFLEET_LOCAL_LOCAL_JOB_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "local/local_measurer.h"
#include "nlohmann/json.hpp"
#include "proto/fleet.pb.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/pretuned/cost_model_prior.h"
#include "tuner_core/pretuned/pretuned_records.h"
#include "tuner_core/records/record.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/xgb_tuner.h"

namespace tunefleet {

// The cost-model priors of a job's xgb tuners: none for `file` "none",
// `file`'s (tunefleet train_prior's output) when it is not empty, else
// those shipped for `family` (none for a family without them, or an empty
// family). The errors of CostModelPriors::ReadFile and ::Shipped.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const CostModelPriors>> LoadCostModelPriors(
    const std::string& family, const std::string& file);

// The records a job's tasks measure first: `file`'s when it is not empty
// (local mode's --pretuned FILE), else those shipped for `family`
// (JobSpec.pretuned_family; none for a family without them), else none.
// The errors of PretunedRecords::ReadFile and PretunedRecords::Shipped.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const PretunedRecords>> LoadPretunedRecords(
    const std::string& family, const std::string& file);

// What a task's tuner proposes first: its pretuned configs, then its default
// config (toolchain/default_config.h) unless one of those is it, so
// its records never lose to an untuned compile.
std::vector<Config> FirstConfigs(const Task& task, const TargetSpec& target,
                                 const PretunedRecords& pretuned);

// What a local job knows beyond its spec.
struct LocalJobSetup {
  // Each task measures first the configs these have for it (a warm start);
  // null: cold.
  const PretunedRecords* pretuned = nullptr;
  // xgb: each task's model starts from its template's prior (a warm start
  // of the model); null or empty: none.
  std::shared_ptr<const CostModelPriors> priors;
  // The records of the job's tasks already in the log (same task, target and
  // arguments) are the job's done trials, as a fleet job's known trials are
  // when a tuner takes it over: they are not measured again, the tuners and
  // the task scheduler learn them, and they count toward the budget, so an
  // interrupted job run again finishes instead of starting over.
  bool resume = false;
  // xgb*: records of other shapes to warm-start each task's cost model
  // (JobRunner::TunerSetup::history).
  std::vector<Record> transfer_history;
  // The job's name in the progress lines ("[local] ...").
  std::string label = "local";
};

// One task of a local job, once it has run.
struct LocalTaskOutcome {
  std::string template_name;  // Task::name()
  std::string workload;       // Workload::Describe()
  double flops = 0;           // of one run of the workload
  int64_t trials = 0;         // measured by this run
  int64_t resumed = 0;        // done trials taken from the log
  // Proposals never measured because the target cannot build them
  // (Tuner::SetConfigCheck; not counted in `trials`).
  int64_t refused_before_measuring = 0;
  // The reported best: validated where a validation pass succeeded, else
  // the search's; 0 and null when nothing worked.
  double best_cost_s = 0;
  nlohmann::json best_config;
  double best_search_cost_s = 0;  // the reported best config's own search figure
  // The search's best (its luckiest figure), validated or not.
  double search_best_cost_s = 0;
  nlohmann::json search_best_config;
  bool validated = false;        // best_cost_s is a validated cost
  int validation_passes = 0;     // successful passes of the validated best
  double validation_spread = 0;  // their (max - min) / median
  int validated_configs = 0;     // configs re-measured (0: validation off or nothing worked)
  // xgb*: the cost model's time and what it learned from other shapes.
  ModelTimings model;
  int64_t history_records = 0;
  std::vector<XgbTuner::HistoryShapeReport> history_shapes;
  std::string model_warning;  // the last fit's error, if any

  double best_gflops() const { return best_cost_s > 0 ? flops / best_cost_s / 1e9 : 0; }
  double search_best_gflops() const {
    return search_best_cost_s > 0 ? flops / search_best_cost_s / 1e9 : 0;
  }
};

struct LocalJobSummary {
  std::vector<LocalTaskOutcome> tasks;
  int64_t trials = 0;              // measured by this run (resumed ones not included)
  double estimated_latency_s = 0;  // sum over tasks of weight x best_cost_s
  int untuned_tasks = 0;
  int validated_lines = 0;  // lines of the log given a "validation" object
  double wall_seconds = 0;
  LocalTimings timings;  // summed over the tasks' measurers
};

// Runs the job `spec` (its tasks, n_trial, tuner, task_policy, selective,
// measure options) locally, then validates each task's winners
// (spec.validate_top_k, validation_passes), with the candidates of the
// resumed trials too. Records go to `log` when it is not empty. Each task
// measures first what setup.pretuned has for it, then its default config.
// InvalidArgument naming the flag for bad validation or measure options;
// the errors of JobRunner::Create, LocalMeasurer::Create, reading the log
// to resume (a missing log is an empty one), the record writer and the
// log's rewrite.
[[nodiscard]] absl::StatusOr<LocalJobSummary> RunLocalJob(
    const proto::JobSpec& spec, const LocalMeasurerOptions& host, const std::string& log,
    std::ostream& progress, const LocalJobSetup& setup = LocalJobSetup());

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_LOCAL_JOB_H_
