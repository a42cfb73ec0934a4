// Shape completion's second half: fills in the output shapes ONNX shape
// inference left unknown, where the inputs' shapes and the (folded)
// constants determine them: Slice with constant bounds, Reshape with a
// constant shape, Transpose, Concat, Pad, Expand, Gather at constant
// indices, BatchNormalization and ONNX's elementwise operators. Runs after
// FoldConstants (a Slice whose ends a Shape subgraph computed is unknown to
// ONNX's shape inference until then); model loading (model_source.h) runs
// both, so task extraction and the compiler see every shape.
//
//   TF_RETURN_IF_ERROR(InferShapes(&graph));
#ifndef TUNEFLEET_TUNER_CORE_GRAPH_INFER_SHAPES_H_
#define TUNEFLEET_TUNER_CORE_GRAPH_INFER_SHAPES_H_

#include "absl/status/status.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// InvalidArgument naming the node whose inputs do not fit it (inputs of a
// Concat that differ off its axis, a bad perm, ...).
[[nodiscard]] absl::Status InferShapes(Graph* graph);

// FoldConstants and InferShapes in turn until no shape or node changes
// (a shape found lets a Shape node fold, which may fix another shape).
[[nodiscard]] absl::StatusOr<Graph> CompleteShapes(Graph graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_GRAPH_INFER_SHAPES_H_
