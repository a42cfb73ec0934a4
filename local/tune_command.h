// The local-mode commands of the `tunefleet` CLI as library functions, so the
// benchmark and tests call exactly what users run:
//
//   tunefleet tune --workload dense --shape 1024,1024,1024 --tuner xgb
//       --trials 500 --log records.jsonl [--transfer_log other_shapes.jsonl]
//       [--validate_top_k 5 --validation_passes 3]
//   tunefleet tune --model resnet18.onnx --trials 64 --log records.jsonl
//   tunefleet best --log records.jsonl
//
// Both `tune`s run one proto::JobSpec through local mode's one job driver
// (local/local_job.h), as `submit` sends the same spec to the fleet. After
// the search, each task's winners are validated: the top --validate_top_k
// configs (resumed ones included) are re-measured --validation_passes times
// each in fresh runner children, the reported best is the validated best,
// and with --log each validated config's line gets its "validation" object
// (the file is rewritten atomically; local/validation_log.h). `best` and
// the summary say which figure they show: validated (median of passes,
// spread) or the search's figure.
#ifndef TUNEFLEET_LOCAL_TUNE_COMMAND_H_
#define TUNEFLEET_LOCAL_TUNE_COMMAND_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "local/local_job.h"
#include "local/local_measurer.h"
#include "nlohmann/json.hpp"
#include "proto/fleet.pb.h"

namespace tunefleet {

// Where and how `tune` runs a job on this machine; what the job is (its
// tasks, tuner, trials, measure options, validation, warm start) is its
// proto::JobSpec alone.
struct LocalRunOptions {
  std::string log;  // records file (appended); empty: none
  // The log's records of the job's tasks are its done trials
  // (LocalJobSetup::resume): a job run again finishes instead of starting over.
  bool resume = true;
  std::string transfer_log;  // xgb*: records of other shapes to warm-start the models
  // A record file whose configs each task measures first, instead of those
  // shipped for spec.pretuned_family (local mode only: the fleet's tuner
  // cannot read the user's files).
  std::string pretuned_file;
  // The cost-model priors the xgb tuner starts each task's model from
  // (tuner_core/pretuned/cost_model_prior.h): empty, those shipped for
  // spec.pretuned_family (none on a cold start); "none", no prior; else a
  // file of `tunefleet train_prior`.
  std::string prior_file;
  // This host's builds, runner child and clock (local/local_job.h: its
  // `measure` and `validation` come from the spec).
  LocalMeasurerOptions host;
  std::string label = "local";  // the job's name in progress lines
};

// Runs `spec` here (local/local_job.h): a one-kernel job and a model's
// job are the same path. Prints what it tunes, then a one-kernel job's
// validation, best config (validated or the search's figure, and which),
// time split and cost model figures, or a model job's table of tasks and
// estimated latency, to `out`; progress lines to `progress`.
// The errors of RunLocalJob, of reading --transfer_log and the pretuned file.
[[nodiscard]] absl::StatusOr<LocalJobSummary> RunTune(const proto::JobSpec& spec,
                                                      const LocalRunOptions& run,
                                                      std::ostream& progress, std::ostream& out);

// Prints the best record per task in `log` (BestPerTask: validated records
// first) with its GFLOPS, which figure that is (validated, with its passes
// and spread, or the search's) and, for a validated one, its search figure.
[[nodiscard]] absl::Status RunBest(const std::string& log, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_LOCAL_TUNE_COMMAND_H_
