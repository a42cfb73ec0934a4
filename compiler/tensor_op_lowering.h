// From one ONNX node to a runtime tensor-operator step (plan.h:
// "strided_copy", "broadcast", "unary", "reduce_mean"): the shapes, strides
// and offsets worked out at compile time, so the runtime only walks them.
// Covers what transformer layers contain beside their matrix products:
// Transpose, Slice (constant starts/ends/axes/steps), broadcasting
// Add/Sub/Mul/Div/Pow, Sqrt/Exp/Erf/Tanh/Sigmoid/Neg and ReduceMean over
// one axis. PlanBuilder binds the step's buffers.
//
//   TF_ASSIGN_OR_RETURN(std::optional<LoweredTensorOp> op, LowerTensorOp(graph, node));
#ifndef TUNEFLEET_COMPILER_TENSOR_OP_LOWERING_H_
#define TUNEFLEET_COMPILER_TENSOR_OP_LOWERING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/runtime/plan.h"
#include "tuner_core/graph/graph.h"

namespace tunefleet {

struct LoweredTensorOp {
  PlanStep step;                      // op, func, shapes, strides; no buffers yet
  std::vector<std::string> operands;  // the tensors it reads, in step.inputs order
};

// The step for `node`, nullopt when its operator is not one of these, or
// InvalidArgument naming the node for a use this lowering does not cover
// (non-constant Slice bounds, ReduceMean over several axes, ...).
[[nodiscard]] absl::StatusOr<std::optional<LoweredTensorOp>> LowerTensorOp(const Graph& graph,
                                                                           const GraphNode& node);

// Fills in the output shapes ONNX shape inference left unknown where the
// inputs' shapes and the (folded) constants determine them: Slice with
// constant bounds, Reshape with a constant shape, Transpose, elementwise
// operators. Run after FoldConstants (a Slice whose ends a Shape subgraph
// computed is unknown to shape inference until then).
[[nodiscard]] absl::Status InferTensorOpShapes(Graph* graph);

// The operators LowerTensorOp covers, for messages.
const std::vector<std::string>& TensorOperators();

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_TENSOR_OP_LOWERING_H_
