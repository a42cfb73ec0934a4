// Whole-model commands of the `tunefleet` CLI (local mode):
//
//   tunefleet tasks --model resnet-18|model.onnx [--input_shape input=1,3,224,224]
//       the model's distinct tuning tasks, with the layers each serves and
//       its share of the model's FLOPs; for an ONNX file also every operator
//       that is not tuned, with its count and why
//   tunefleet tasks --model ... --similarity [--selective_threshold 0.01]
//       the tasks' similarity matrix and selective tuning's clusters
//   tunefleet tune --model resnet-18 --trials 200 --tuner xgb --log r.jsonl
//       [--task_policy gradient] [--selective=top3] [--time_budget 10m]
//       the model as one job, locally, with the fleet's model-job logic
//       (local/model_job.h): the task scheduler spreads trials x tasks over
//       the tasks (plain: each task in turn, AutoTVM's tune_tasks),
//       selective tuning tunes representatives only; into one records file,
//       then each task's best and the model's estimated latency
#ifndef TUNEFLEET_CLI_MODEL_COMMAND_H_
#define TUNEFLEET_CLI_MODEL_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "local/model_job.h"
#include "local/tune_command.h"
#include "proto_convert/model_job.h"
#include "tuner_core/graph/onnx_import.h"

namespace tunefleet {

// Prints the task table of `model` (a built-in name or an ONNX file; see
// tuner_core/graph/model_source.h); the errors of LoadModel.
[[nodiscard]] absl::Status RunTasks(const std::string& model, const OnnxImportOptions& onnx,
                                    std::ostream& out);

// Prints selective tuning's view of `model` for `target` (empty: the host):
// the pairwise similarity of the tasks' spaces (tuner_core/selective), the
// clusters (maximal cliques at `threshold`) with their representatives, and
// the tasks that share nothing with any other.
[[nodiscard]] absl::Status RunSimilarity(const std::string& model, const OnnxImportOptions& onnx,
                                         const std::string& target, double threshold,
                                         std::ostream& out);

// Tunes `model` locally as one model job: `base.trials` per task (which
// overrides job.trials_per_task), its tuner, seed, plan_size, target, log
// (resumed with base.resume: the log's trials of these tasks count as done),
// transfer log, pretuned records and measurement options; `job`'s policy and
// selective tuning. Prints each task's best and the estimated latency.
[[nodiscard]] absl::StatusOr<LocalModelSummary> RunTuneModelJob(
    const std::string& model, const OnnxImportOptions& onnx, const TuneCommandOptions& base,
    const ModelJobOptions& job, std::ostream& progress, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_MODEL_COMMAND_H_
