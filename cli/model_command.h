// Whole-model commands of the `tunefleet` CLI (local mode):
//
//   tunefleet tasks --model resnet-18|model.onnx [--input_shape input=1,3,224,224]
//       the model's distinct tuning tasks, with the layers each serves and
//       its share of the model's FLOPs; for an ONNX file also every operator
//       that is not tuned, with its count and why
//   tunefleet tasks --model ... --similarity [--selective_threshold 0.01]
//       the tasks' similarity matrix and selective tuning's clusters
//   tunefleet tune --model resnet-18 --trials 200 --tuner xgb --log r.jsonl
//       tunes every task in turn (one AutoTVM progress line per task,
//       "[Task 3/12]"), into one records file, then prints each task's best
//       and the summed best latency of the model's tuned layers
//   tunefleet tune --model resnet-18 --trials 200 --task_policy gradient
//       [--selective=top3]
//       the model as one job, locally, with the fleet's model-job logic
//       (local/model_job.h): the task scheduler spreads trials x tasks over
//       the tasks, selective tuning tunes representatives only
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

struct ModelTaskResult {
  std::string workload;  // Describe()
  int num_layers = 0;
  TuneSummary summary;
};

struct ModelTuneSummary {
  std::vector<ModelTaskResult> tasks;
  // Sum over tasks of best latency x layers served; tasks where no config
  // succeeded are counted in `untuned_tasks` and left out of the sum.
  double model_latency_seconds = 0;
  int untuned_tasks = 0;
  double wall_seconds = 0;
  double build_wall_seconds = 0;    // the tasks' parallel build phases
  double measure_wall_seconds = 0;  // the tasks' measure phases
  double model_seconds = 0;         // the tuners' cost models (xgb*)
};

// Tunes every task of `model` with `base`'s tuner, trials, log and
// measurement options (its workload, args, shape and template are set per
// task). Progress lines go to `progress`, everything else to `out`.
[[nodiscard]] absl::StatusOr<ModelTuneSummary> RunTuneModel(const std::string& model,
                                                            const OnnxImportOptions& onnx,
                                                            const TuneCommandOptions& base,
                                                            std::ostream& progress,
                                                            std::ostream& out);

// Tunes `model` locally as one model job: `base.trials` per task (which
// overrides job.trials_per_task), its tuner, seed, target, log and
// measurement options; `job`'s policy and selective tuning. Prints each task's best and the
// estimated latency.
[[nodiscard]] absl::StatusOr<LocalModelSummary> RunTuneModelJob(
    const std::string& model, const OnnxImportOptions& onnx, const TuneCommandOptions& base,
    const ModelJobOptions& job, std::ostream& progress, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_MODEL_COMMAND_H_
