// A model by what the user names: a built-in layer list ("resnet-18", ...)
// or an ONNX file ("model.onnx"). Every `--model` flag goes through here, so
// both kinds give the same tasks, layer names and FLOP shares.
//
//   absl::StatusOr<LoadedModel> model = LoadModel("resnet18.onnx", options);
//   for (const ModelTask& task : model->tasks) ...
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_MODEL_SOURCE_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_MODEL_SOURCE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/graph/graph.h"
#include "tuner_core/graph/onnx_import.h"
#include "tuner_core/graph/task_extraction.h"
#include "tuner_core/models/model_zoo.h"

namespace tunefleet {

struct LoadedModel {
  std::string source;                     // the name or path given
  std::vector<ModelLayer> layers;         // tunable layers, in model order
  std::vector<ModelTask> tasks;           // GroupLayers(layers)
  std::vector<UntunedOperators> untuned;  // ONNX only: every other operator
  std::optional<Graph> graph;             // ONNX only
};

// True when `model` names a file (ends in ".onnx" or contains a '/').
bool IsModelFile(const std::string& model);

// A built-in name (NotFound listing them) or an ONNX file (errors of
// ImportOnnxFile / ExtractLayers). `options` applies to ONNX files only.
[[nodiscard]] absl::StatusOr<LoadedModel> LoadModel(const std::string& model,
                                                    const OnnxImportOptions& options);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_MODEL_SOURCE_H_
