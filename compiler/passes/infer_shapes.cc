#include "compiler/passes/infer_shapes.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "compiler/node_error.h"
#include "compiler/operator_table.h"
#include "compiler/tensor_op_lowering.h"

namespace tunefleet {
namespace {

// numpy broadcasting of two shapes (empty on a mismatch).
std::vector<int64_t> Broadcast(std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  const size_t shift = a.size() - b.size();
  for (size_t d = 0; d < b.size(); ++d) {
    int64_t& dim = a[d + shift];
    if (dim == 1) {
      dim = b[d];
    } else if (b[d] != 1 && b[d] != dim) {
      return {};
    }
  }
  return a;
}

[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ConcatShape(const Graph& graph,
                                                               const GraphNode& node,
                                                               const std::vector<int64_t>& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  int64_t axis = IntAttribute(node, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return NodeError(node, "axis out of range");
  std::vector<int64_t> out = in;
  out[axis] = 0;
  for (const std::string& input : node.inputs) {
    if (!graph.shapes.count(input)) return std::vector<int64_t>();
    const std::vector<int64_t>& dims = graph.shapes.at(input).dims;
    if (static_cast<int64_t>(dims.size()) != rank) return NodeError(node, "inputs of other ranks");
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && dims[d] != in[d]) {
        return NodeError(node, "inputs differ outside the concatenation axis");
      }
    }
    out[axis] += dims[axis];
  }
  return out;
}

std::vector<int64_t> ReshapedShape(const Graph& graph, const GraphNode& node,
                                   const std::vector<int64_t>& in) {
  if (node.inputs.size() < 2) return {};
  auto shape = graph.constants.find(node.inputs[1]);
  if (shape == graph.constants.end() || shape->second.shape.dtype != kOnnxInt64) return {};
  std::vector<int64_t> out = shape->second.i64;
  int64_t known = 1, elements = 1, unknown = -1;
  for (int64_t d : in) elements *= d;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 0 && d < in.size()) out[d] = in[d];
    if (out[d] == -1) {
      unknown = static_cast<int64_t>(d);
    } else {
      known *= out[d];
    }
  }
  if (unknown >= 0 && known > 0) out[unknown] = elements / known;
  return out;
}

// The output shape of `node` from its inputs' shapes and constants, or
// empty when unknown here.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> InferredShape(const Graph& graph,
                                                                 const GraphNode& node) {
  const std::string& op = node.op_type;
  if (node.inputs.empty() || !graph.shapes.count(node.inputs[0])) return std::vector<int64_t>();
  const std::vector<int64_t> in = graph.shapes.at(node.inputs[0]).dims;
  if (op == "Slice") {
    TF_ASSIGN_OR_RETURN(PlanStep slice, SliceStep(graph, node, in));
    return slice.out_shape;
  }
  if (op == "BatchNormalization" || op == "Identity" || op == "Dropout" ||
      op == "LayerNormalization") {
    return in;
  }
  if (op == "Pad") return PaddedShape(graph, node, in);
  if (op == "Concat") return ConcatShape(graph, node, in);
  if (op == "Expand" && node.inputs.size() == 2) {
    auto shape = graph.constants.find(node.inputs[1]);
    if (shape == graph.constants.end() || !IsIntegerDtype(shape->second.shape.dtype)) {
      return std::vector<int64_t>();
    }
    std::vector<int64_t> out = Broadcast(in, shape->second.i64);
    if (out.empty()) return NodeError(node, "the shape does not broadcast with the input's");
    return out;
  }
  if (op == "Gather" && node.inputs.size() == 2 && graph.IsConstant(node.inputs[1])) {
    const int64_t rank = static_cast<int64_t>(in.size());
    int64_t axis = IntAttribute(node, "axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return NodeError(node, "axis out of range");
    std::vector<int64_t> out(in.begin(), in.begin() + axis);
    const std::vector<int64_t>& index_dims = graph.constants.at(node.inputs[1]).shape.dims;
    out.insert(out.end(), index_dims.begin(), index_dims.end());
    out.insert(out.end(), in.begin() + axis + 1, in.end());
    return out;
  }
  if (op == "Reshape") return ReshapedShape(graph, node, in);
  if (op == "Transpose") {
    std::vector<int64_t> out;
    for (int64_t p : IntsAttribute(node, "perm", {})) {
      if (p < 0 || p >= static_cast<int64_t>(in.size())) return NodeError(node, "bad perm");
      out.push_back(in[p]);
    }
    return out.size() == in.size() ? out : std::vector<int64_t>();
  }
  const OperatorInfo* info = FindOperator(op);
  if (info == nullptr) return std::vector<int64_t>();
  if (info->lowering == OpLowering::kPointwise) return in;  // Clip's other inputs are bounds
  const bool binary = info->lowering == OpLowering::kAdd || info->lower == kLowerBinary;
  if (!binary) return std::vector<int64_t>();
  std::vector<int64_t> out = in;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    if (!graph.shapes.count(node.inputs[i])) return std::vector<int64_t>();
    out = Broadcast(out, graph.shapes.at(node.inputs[i]).dims);
  }
  return out;
}

}  // namespace

[[nodiscard]] absl::Status InferShapes(Graph* graph) {
  for (const GraphNode& node : graph->nodes) {
    if (node.outputs.empty() || graph->shapes.count(node.outputs[0])) continue;
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, InferredShape(*graph, node));
    if (dims.empty()) continue;
    graph->shapes[node.outputs[0]] = TensorShape{graph->shapes.at(node.inputs[0]).dtype, dims};
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
