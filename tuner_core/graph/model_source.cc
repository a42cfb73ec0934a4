#include "tuner_core/graph/model_source.h"

#include <utility>

#include "absl/strings/match.h"
#include "common/status_macros.h"
#include "tuner_core/graph/canonicalize.h"
#include "tuner_core/graph/dead_conv_taps.h"
#include "tuner_core/graph/infer_shapes.h"

namespace tunefleet {

bool IsModelFile(const std::string& model) {
  return absl::EndsWith(model, ".onnx") || absl::StrContains(model, "/");
}

[[nodiscard]] absl::StatusOr<LoadedModel> LoadModel(const std::string& model,
                                                    const OnnxImportOptions& options) {
  LoadedModel loaded;
  loaded.source = model;
  if (IsModelFile(model)) {
    TF_ASSIGN_OR_RETURN(Graph imported, ImportOnnxFile(model, options));
    TF_RETURN_IF_ERROR(Canonicalize(&imported));
    // Shapes ONNX's inference leaves unknown (a Slice whose bounds a Shape
    // subgraph computes) are known once the shape arithmetic is folded.
    TF_ASSIGN_OR_RETURN(Graph graph, CompleteShapes(std::move(imported)));
    DropDeadConvTaps(&graph);
    TF_ASSIGN_OR_RETURN(GraphLayers layers, ExtractLayers(graph));
    loaded.layers = std::move(layers.layers);
    loaded.untuned = std::move(layers.untuned);
    loaded.graph = std::move(graph);
  } else {
    TF_ASSIGN_OR_RETURN(loaded.layers, ModelLayers(model));
  }
  loaded.tasks = GroupLayers(loaded.layers);
  return loaded;
}

}  // namespace tunefleet
