// The normalisations of tensor_op_lowering.h: BatchNormalization left
// after folding (inference form), LayerNormalization, InstanceNormalization.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "compiler/tensor_op_lowering.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// Inputs first..last of `node` (scale, B, ...) as operands, each one float
// per channel of `in` (axis 1).
[[nodiscard]] absl::Status PerChannelOperands(const Graph& graph, const GraphNode& node,
                                              const TensorShape& in, size_t first, size_t last,
                                              LoweredTensorOp& lowered) {
  for (size_t i = first; i <= last; ++i) {
    TF_ASSIGN_OR_RETURN(TensorShape s, graph.ShapeOf(node.inputs[i], &node));
    if (s.dtype != kOnnxFloat || s.NumElements() != in.dims[1]) {
      return NodeError(node, absl::StrCat("input '", node.inputs[i], "' ", s.ToString(),
                                          " is not one float per channel"));
    }
    lowered.operands.push_back(node.inputs[i]);
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerBatchNorm(const Graph& graph, const GraphNode& node,
                                          const TensorShape& in, const TensorShape&,
                                          LoweredTensorOp& lowered) {
  // One that no Conv absorbed (DenseNet's pre-activation): inference form,
  // per channel (axis 1) of [N, C, ...]; operands x, scale, B, mean, var;
  // in_shape [N, C, positions per channel]; alpha: epsilon.
  if (node.inputs.size() != 5) return NodeError(node, "needs 5 inputs");
  if (in.dims.size() < 2) return NodeError(node, "needs an input of rank 2 or more");
  if (IntAttribute(node, "training_mode", 0) != 0) {
    return NodeError(node, "training_mode is not supported");
  }
  int64_t inner = 1;
  for (size_t d = 2; d < in.dims.size(); ++d) inner *= in.dims[d];
  TF_RETURN_IF_ERROR(PerChannelOperands(graph, node, in, 1, 4, lowered));
  lowered.step.op = StepOp::kBatchNorm;
  lowered.step.in_shape = {in.dims[0], in.dims[1], inner};
  lowered.step.alpha = node.attributes.value("epsilon", 1e-5f);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerLayerNorm(const Graph& graph, const GraphNode& node,
                                          const TensorShape& in, const TensorShape&,
                                          LoweredTensorOp& lowered) {
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", -1), rank));
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i].empty()) continue;
    TF_ASSIGN_OR_RETURN(TensorShape s, graph.ShapeOf(node.outputs[i], &node));
    int64_t rows = 1;
    for (int64_t d = 0; d < axis; ++d) rows *= in.dims[d];
    if (s.NumElements() != rows) return NodeError(node, "Mean/InvStdDev of an unexpected shape");
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in.dims[d];
  for (int64_t d = axis; d < rank; ++d) inner *= in.dims[d];
  const bool scale = node.inputs.size() > 1 && !node.inputs[1].empty();
  const bool bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  if (bias && !scale) return NodeError(node, "B without Scale");
  for (size_t i = 1; i < 3 && i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    TF_ASSIGN_OR_RETURN(TensorShape s, graph.ShapeOf(node.inputs[i], &node));
    if (s.dtype != kOnnxFloat || s.NumElements() != inner) {
      return NodeError(node, absl::StrCat("input '", node.inputs[i], "' ", s.ToString(),
                                          " is not one float per normalised position"));
    }
    lowered.operands.push_back(node.inputs[i]);
  }
  lowered.step.op = StepOp::kLayerNorm;
  lowered.step.in_shape = {outer, inner};
  // Mean and InvStdDev (training's outputs) when the node names them.
  for (size_t i = 1; i < node.outputs.size() && i < 3; ++i) {
    lowered.more_outputs.push_back(node.outputs[i]);
  }
  lowered.step.alpha = node.attributes.value("epsilon", 1e-5f);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerInstanceNorm(const Graph& graph, const GraphNode& node,
                                             const TensorShape& in, const TensorShape&,
                                             LoweredTensorOp& lowered) {
  // [N, C, spatial...] normalised over the spatial positions of each (n, c),
  // then scale[c] and B[c]: a layer norm of rows N * C with one scale and
  // bias per row (in_shape [rows, positions, C]).
  if (in.dims.size() < 3) return NodeError(node, "needs an input of rank 3 or more");
  if (node.inputs.size() != 3) return NodeError(node, "needs input, scale and B");
  int64_t inner = 1;
  for (size_t d = 2; d < in.dims.size(); ++d) inner *= in.dims[d];
  TF_RETURN_IF_ERROR(PerChannelOperands(graph, node, in, 1, 2, lowered));
  lowered.step.op = StepOp::kLayerNorm;
  lowered.step.in_shape = {in.dims[0] * in.dims[1], inner, in.dims[1]};
  lowered.step.alpha = node.attributes.value("epsilon", 1e-5f);
  return absl::OkStatus();
}

}  // namespace

const TensorOpLowering kLowerBatchNorm = &LowerBatchNorm;
const TensorOpLowering kLowerLayerNorm = &LowerLayerNorm;
const TensorOpLowering kLowerInstanceNorm = &LowerInstanceNorm;

}  // namespace tunefleet
