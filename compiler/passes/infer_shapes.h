// The compiler's shape inference: fills in the output shapes ONNX shape
// inference left unknown, where the inputs' shapes and the (folded)
// constants determine them: Slice with constant bounds, Reshape with a
// constant shape, Transpose, Concat, a Pad that copies, BatchNormalization
// and every elementwise operator of the operator table. Runs after
// FoldConstants (a Slice whose ends a Shape subgraph computed is unknown to
// ONNX's shape inference until then).
//
//   TF_RETURN_IF_ERROR(InferShapes(&graph));
#ifndef TUNEFLEET_COMPILER_PASSES_INFER_SHAPES_H_
#define TUNEFLEET_COMPILER_PASSES_INFER_SHAPES_H_

#include "absl/status/status.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

// InvalidArgument naming the node whose inputs do not fit it (inputs of a
// Concat that differ off its axis, a bad perm, ...).
[[nodiscard]] absl::Status InferShapes(Graph* graph);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_INFER_SHAPES_H_
