// The flags more than one `tunefleet` command reads (a search's, a
// measurement's, a model's, the fleet directory), and the options each group
// of them makes. A flag only one command reads lives in that command's file.
#ifndef TUNEFLEET_CLI_SHARED_FLAGS_H_
#define TUNEFLEET_CLI_SHARED_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "local/measure_command.h"
#include "local/tune_command.h"
#include "proto/fleet.pb.h"
#include "tuner_core/graph/onnx_import.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/records/remeasure_selection.h"

ABSL_DECLARE_FLAG(std::string, workload);
ABSL_DECLARE_FLAG(std::string, model);
ABSL_DECLARE_FLAG(double, selective_threshold);
ABSL_DECLARE_FLAG(std::string, input_shape);
ABSL_DECLARE_FLAG(std::string, shape);
ABSL_DECLARE_FLAG(std::string, args);
ABSL_DECLARE_FLAG(std::string, layout);
ABSL_DECLARE_FLAG(std::string, template_name);
ABSL_DECLARE_FLAG(std::string, tuner);
ABSL_DECLARE_FLAG(int32_t, plan_size);
ABSL_DECLARE_FLAG(std::string, pretuned);
ABSL_DECLARE_FLAG(bool, share_runner_child);
ABSL_DECLARE_FLAG(bool, build_ahead);
ABSL_DECLARE_FLAG(double, reject_slower_than);
ABSL_DECLARE_FLAG(int64_t, trials);
ABSL_DECLARE_FLAG(int64_t, trials_per_task);
ABSL_DECLARE_FLAG(std::string, task_policy);
ABSL_DECLARE_FLAG(std::string, selective);
ABSL_DECLARE_FLAG(std::string, share_schedules);
ABSL_DECLARE_FLAG(std::string, transfer_between_tasks);
ABSL_DECLARE_FLAG(int64_t, selective_followup);
ABSL_DECLARE_FLAG(std::string, task);
ABSL_DECLARE_FLAG(int64_t, early_stopping);
ABSL_DECLARE_FLAG(int32_t, batch);
ABSL_DECLARE_FLAG(std::string, log);
ABSL_DECLARE_FLAG(std::string, target);
ABSL_DECLARE_FLAG(uint64_t, seed);
ABSL_DECLARE_FLAG(int32_t, threads);
ABSL_DECLARE_FLAG(int32_t, number);
ABSL_DECLARE_FLAG(int32_t, repeat);
ABSL_DECLARE_FLAG(std::string, o);
ABSL_DECLARE_FLAG(int32_t, runs);
ABSL_DECLARE_FLAG(int32_t, warmup);
ABSL_DECLARE_FLAG(absl::Duration, time_budget);
ABSL_DECLARE_FLAG(int32_t, min_repeat_ms);
ABSL_DECLARE_FLAG(double, cooldown);
ABSL_DECLARE_FLAG(std::string, cache_flush);
ABSL_DECLARE_FLAG(double, timeout);
ABSL_DECLARE_FLAG(double, target_rel_ci);
ABSL_DECLARE_FLAG(int32_t, max_repeat);
ABSL_DECLARE_FLAG(int32_t, validate_top_k);
ABSL_DECLARE_FLAG(int32_t, validation_passes);
ABSL_DECLARE_FLAG(std::string, fleet_dir);
ABSL_DECLARE_FLAG(std::string, key);

namespace tunefleet {

// The time evaluator settings of --number ... --timeout, for local tuning
// and for jobs submitted to the fleet alike. --cache_flush unset flushes for
// a `model_job`: its kernels run in the compiled model with their weights
// cold, and a config timed with them hot wins by rereading them (ResNet-50
// after 30 trials per task compiled 1.05-1.16x faster from cold timings;
// bench/results/cache_flush_*). InvalidArgument for a bad --cache_flush.
[[nodiscard]] absl::StatusOr<MeasureOptions> MeasureFromFlags(bool model_job);

// measure: which records of --log it re-measures (--top and --passes are
// measure's own flags: passed in).
RemeasureSelection RemeasureSelectionFromFlags(int top, int passes);

// --trials resolved: as given, else 500; for a model job under
// --time_budget with no --trials, 0 (no per-task cap: the budget alone ends
// the search).
int64_t TrialsFromFlags();

// What a command fills in when its flags leave it open.
struct JobFlagDefaults {
  std::string target;       // when --target is empty
  std::string task_policy;  // a model job's, when --task_policy is empty
  // The job goes to the fleet, whose tuner cannot read a --pretuned file:
  // one is refused, naming it.
  bool for_fleet = false;
};

// The job the flags describe: the one description of a job that `tune`,
// `optimize` and `submit` make, run here or send to the fleet.
//   what: --model (with --input_shape; trials per task from
//     --trials_per_task, else --trials; --task_policy, --selective,
//     --selective_followup, --share_schedules, --transfer_between_tasks,
//     --time_budget), or
//     --workload with --shape or --args, --layout and --template_name;
//   how: --target, --tuner, --seed, --early_stopping, --plan_size, the time
//     evaluator's flags (spec.measure), --validate_top_k,
//     --validation_passes, and the warm start (--pretuned: empty, the
//     records shipped for the target's family; anything else, none in the
//     spec: "none" is a cold start, a file is LocalRunFromFlags'), and each
//     task's target's vector registers (TaskSpec.vectors, resolved here).
// The command adds its own (tune: window = --batch; submit: name, key,
// priority, window, queue timeout). The errors of the flags' parsers, of
// loading the model and of the target string.
[[nodiscard]] absl::StatusOr<proto::JobSpec> JobSpecFromFlags(const JobFlagDefaults& defaults);

// How this host runs a job (tune, optimize): --log, the --pretuned record
// file, --threads, --share_runner_child, --build_ahead, --reject_slower_than. (tune adds
// --resume and --transfer_log.)
LocalRunOptions LocalRunFromFlags();

// --threads for running a compiled model (run, optimize): 0 means every core.
int RunThreadsFromFlag();

// --input_shape as the ONNX importer's options.
[[nodiscard]] absl::StatusOr<OnnxImportOptions> OnnxOptionsFromFlag();

// --task as a model job's task index for best and export; -1 (the whole
// job) when empty.
[[nodiscard]] absl::StatusOr<int> TaskIndexFromFlag();

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_SHARED_FLAGS_H_
