// The local-mode commands of the `tunefleet` CLI as library functions, so the
// benchmark and tests call exactly what users run:
//
//   tunefleet tune --workload dense --shape 1024,1024,1024 --tuner xgb
//       --trials 500 --log records.jsonl [--transfer_log other_shapes.jsonl]
//       [--validate_top_k 5 --validation_passes 3]
//   tunefleet best --log records.jsonl
//
// After the search, `tune` validates the task's winners (local/
// validate_winners.h): the top --validate_top_k configs (resumed ones
// included) are re-measured --validation_passes times each in fresh runner
// children, the reported best is the validated best, and with --log each
// validated config's line gets its "validation" object (the file is
// rewritten atomically; local/validation_log.h). `best` and the summary say
// which figure they show: validated (median of passes, spread) or the
// search's figure.
#ifndef TUNEFLEET_LOCAL_TUNE_COMMAND_H_
#define TUNEFLEET_LOCAL_TUNE_COMMAND_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "local/local_measurer.h"
#include "local/validate_winners.h"
#include "nlohmann/json.hpp"
#include "toolchain/codegen/target.h"
#include "tuner_core/pretuned/pretuned_records.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// The records `choice` (TuneCommandOptions::pretuned) names for `target`:
// "" those shipped for its family (none for a family without them), "none"
// none, else the file's (errors of PretunedRecords::ReadFile).
[[nodiscard]] absl::StatusOr<std::shared_ptr<const PretunedRecords>> LoadPretunedRecords(
    const std::string& choice, const TargetSpec& target);

// What a task's tuner proposes first: its pretuned configs, then its default
// config (toolchain/default_config.h) unless one of those is it, so
// its records never lose to an untuned compile.
std::vector<Config> FirstConfigs(const Task& task, const TargetSpec& target,
                                 const PretunedRecords& pretuned);

struct TuneCommandOptions {
  std::string workload = "dense";
  nlohmann::json args;           // the workload's args (JSON object); null: from shape/layout
  std::string shape;             // "M,N,K" for dense, "B,M,N,K" for batch_matmul
  std::string layout = "NK";     // dense: NK (B is [N,K]) or KN
  std::string template_name;     // empty: the workload's default template
  std::string tuner = "random";  // grid | random | ga | xgb | xgb_rank | xgb_knob | xgb_curve
  int plan_size = 64;            // xgb*: refit every plan_size results
  std::string transfer_log;      // xgb*: records of other shapes to warm-start the model
  // Where each task's first candidates come from (LoadPretunedRecords):
  // "" the records shipped for the target's family, "none" a cold start,
  // else a record file.
  std::string pretuned;
  int64_t trials = 500;
  int64_t early_stopping = -1;
  int batch_size = 8;
  std::string log;     // records file (appended); empty: none
  std::string target;  // empty: the host ("llvm -mcpu=<host cpu>")
  uint64_t seed = 0;
  bool resume = true;                     // skip configs already in --log for this task
  std::string task_label = "[Task 1/1]";  // prefix of the progress line
  LocalMeasurerOptions local;             // local.validation: --validate_top_k, --validation_passes
};

struct TuneSummary {
  std::string task_name;
  std::string workload;  // Describe()
  std::string target;
  int64_t trials = 0;
  int64_t resumed = 0;  // configs skipped because --log had them
  // Proposals never measured because the target cannot build them
  // (Tuner::SetConfigCheck; not counted in `trials`).
  int64_t refused_before_measuring = 0;
  // The reported best: the validated best when validation ran and a pass
  // succeeded, else the search's best.
  double best_gflops = 0;
  double best_cost_seconds = 0;
  nlohmann::json best_config;  // null when nothing succeeded
  bool best_validated = false;
  int best_validation_passes = 0;     // successful passes of the validated best
  double best_validation_spread = 0;  // their (max - min) / median
  double best_search_gflops = 0;      // the reported best config's own search figure
  // The search's best (its luckiest figure), validated or not.
  double search_best_gflops = 0;
  double search_best_cost_seconds = 0;
  nlohmann::json search_best_config;
  int validated_configs = 0;  // configs re-measured (0: validation off or nothing succeeded)
  int validated_lines = 0;    // lines of --log given a "validation" object
  double wall_seconds = 0;
  LocalTimings timings;
  double model_seconds = 0;  // xgb*: fitting + selecting (ModelTimings::total_seconds)
};

// Workload args from the CLI's --workload/--shape/--layout (dense and
// batch_matmul; other workloads take --args).
[[nodiscard]] absl::StatusOr<nlohmann::json> WorkloadArgsFromShape(const std::string& workload,
                                                                   const std::string& shape,
                                                                   const std::string& layout);

// Runs the tuning job; progress lines go to `progress`, the summary to `out`.
// InvalidArgument naming the flag for bad validation options, before
// anything is measured.
[[nodiscard]] absl::StatusOr<TuneSummary> RunTune(const TuneCommandOptions& options,
                                                  std::ostream& progress, std::ostream& out);

// Prints the best record per task in `log` (BestPerTask: validated records
// first) with its GFLOPS, which figure that is (validated, with its passes
// and spread, or the search's) and, for a validated one, its search figure.
[[nodiscard]] absl::Status RunBest(const std::string& log, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_TUNE_COMMAND_H_
