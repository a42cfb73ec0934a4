// Whole-model commands of the `tunefleet` CLI (local mode):
//
//   tunefleet tasks --model resnet-18|model.onnx [--input_shape input=1,3,224,224]
//       the model's distinct tuning tasks, with the layers each serves and
//       its share of the model's FLOPs; for an ONNX file also every operator
//       that is not tuned, with its count and why
//   tunefleet tasks --model ... --similarity [--selective_threshold 0.01]
//       the tasks' similarity matrix and selective tuning's clusters
//
// and the job spec of a model that `tune --model`, `optimize` and
// `submit --model` run (ModelJobSpec).
#ifndef TUNEFLEET_CLI_MODEL_COMMAND_H_
#define TUNEFLEET_CLI_MODEL_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/fleet.pb.h"
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

// The job of tuning `model` (a built-in name or an ONNX file) on `target`:
// its distinct tasks (LoadModel), weighted by the layers each serves, spread
// by `job` (MakeModelJobSpec); the rest of the spec (tuner, seed, measure
// options) is the caller's. `tune --model`, `optimize` and `submit --model`
// make their jobs here. The errors of LoadModel.
[[nodiscard]] absl::StatusOr<proto::JobSpec> ModelJobSpec(const std::string& model,
                                                          const OnnxImportOptions& onnx,
                                                          const std::string& target,
                                                          const ModelJobOptions& job);

}  // namespace tunefleet

#endif  // TUNEFLEET_CLI_MODEL_COMMAND_H_
