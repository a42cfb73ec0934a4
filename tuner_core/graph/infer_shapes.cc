#include "tuner_core/graph/infer_shapes.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/graph/canonicalize.h"
#include "tuner_core/graph/fold_constants.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::StatusOr<std::optional<std::vector<int64_t>>> ConcatShape(
    const Graph& graph, const GraphNode& node, const std::vector<int64_t>& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", 0), rank));
  std::vector<int64_t> out = in;
  out[axis] = 0;
  for (const std::string& input : node.inputs) {
    if (!graph.shapes.count(input)) return std::nullopt;
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

std::optional<std::vector<int64_t>> ReshapedShape(const Graph& graph, const GraphNode& node,
                                                  const std::vector<int64_t>& in) {
  if (node.inputs.size() < 2) return std::nullopt;
  auto shape = graph.constants.find(node.inputs[1]);
  if (shape == graph.constants.end() || !IsIntegerDtype(shape->second.shape.dtype)) {
    return std::nullopt;
  }
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

// The axes attribute, or (opset 13 on) input 1; empty when neither.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> AxesOf(const Graph& graph,
                                                          const GraphNode& node) {
  std::vector<int64_t> axes = IntsAttribute(node, "axes", {});
  if (axes.empty()) {
    TF_ASSIGN_OR_RETURN(axes, IntsInput(graph, node, 1));
  }
  return axes;
}

// Conv's and pooling's output: [N, K or C, spatial...] with each spatial
// extent from the window (kernel, stride, dilation, pads or auto_pad;
// pooling's ceil_mode).
[[nodiscard]] absl::StatusOr<std::optional<std::vector<int64_t>>> WindowedShape(
    const Graph& graph, const GraphNode& node, const std::vector<int64_t>& in) {
  if (in.size() < 3) return NodeError(node, "input of rank below 3");
  const size_t spatial = in.size() - 2;
  std::vector<int64_t> out = in;
  std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape", {});
  if (node.op_type == "Conv") {
    if (node.inputs.size() < 2 || !graph.shapes.count(node.inputs[1])) return std::nullopt;
    const std::vector<int64_t>& w = graph.shapes.at(node.inputs[1]).dims;
    if (w.size() != in.size()) return NodeError(node, "weights of another rank");
    out[1] = w[0];
    if (kernel.empty()) kernel.assign(w.begin() + 2, w.end());
  }
  const std::vector<int64_t> strides =
      IntsAttribute(node, "strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations =
      IntsAttribute(node, "dilations", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads =
      IntsAttribute(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    return NodeError(node, "kernel_shape, strides, dilations or pads do not fit the input");
  }
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  const bool ceil_mode = IntAttribute(node, "ceil_mode", 0) != 0;
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t size = in[2 + d], extent = dilations[d] * (kernel[d] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[2 + d] = (size + strides[d] - 1) / strides[d];
      continue;
    }
    const int64_t padded = auto_pad == "VALID" ? size : size + pads[d] + pads[spatial + d];
    if (padded < extent) return NodeError(node, "window larger than the padded input");
    out[2 + d] = ceil_mode ? (padded - extent + strides[d] - 1) / strides[d] + 1
                           : (padded - extent) / strides[d] + 1;
    // ONNX (as PyTorch): a ceil-mode window must start inside the input or
    // its left padding.
    if (ceil_mode && (out[2 + d] - 1) * strides[d] >= size + pads[d]) --out[2 + d];
  }
  return out;
}

// numpy matmul of the two inputs' shapes.
[[nodiscard]] absl::StatusOr<std::optional<std::vector<int64_t>>> MatMulShape(
    const Graph& graph, const GraphNode& node, std::vector<int64_t> a) {
  if (node.inputs.size() < 2 || !graph.shapes.count(node.inputs[1])) return std::nullopt;
  std::vector<int64_t> b = graph.shapes.at(node.inputs[1]).dims;
  if (a.empty() || b.empty()) return std::nullopt;
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  if (a.back() != b[b.size() - 2]) return NodeError(node, "inner dimensions differ");
  std::vector<int64_t> batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  std::optional<std::vector<int64_t>> batch = BroadcastShapes(batch_a, batch_b);
  if (!batch) return NodeError(node, "batches do not broadcast");
  std::vector<int64_t> out = *batch;
  if (!a_vector) out.push_back(a[a.size() - 2]);
  if (!b_vector) out.push_back(b.back());
  return out;
}

// The output shape of `node` from its inputs' shapes and constants (empty
// for a scalar), or nullopt when unknown here.
[[nodiscard]] absl::StatusOr<std::optional<std::vector<int64_t>>> InferredShape(
    const Graph& graph, const GraphNode& node) {
  const std::string& op = node.op_type;
  if (node.inputs.empty() || !graph.shapes.count(node.inputs[0])) return std::nullopt;
  const std::vector<int64_t> in = graph.shapes.at(node.inputs[0]).dims;
  if (op == "Slice") {
    TF_ASSIGN_OR_RETURN(SliceWindow slice, SliceWindowOf(graph, node, in));
    return slice.out_shape;
  }
  if (op == kDilateOp) {
    const std::vector<int64_t> strides = IntsAttribute(node, "strides", {1, 1});
    const std::vector<int64_t> pads = IntsAttribute(node, "pads", {0, 0, 0, 0});
    if (in.size() != 4 || strides.size() != 2 || pads.size() != 4) {
      return NodeError(node, "needs a 4-D input, 2 strides and 4 pads");
    }
    std::vector<int64_t> out = in;
    for (size_t d = 0; d < 2; ++d) {
      out[2 + d] = (in[2 + d] - 1) * strides[d] + 1 + pads[d] + pads[2 + d];
      if (strides[d] < 1 || out[2 + d] < 1) return NodeError(node, "strides or pads out of range");
    }
    return out;
  }
  if (op == "Resize") {
    TF_ASSIGN_OR_RETURN(ResizeShape shape, ResizeShapeOf(graph, node, in));
    return shape.out;
  }
  if (op == "BatchNormalization" || op == "Identity" || op == "Dropout" || op == "ScatterND") {
    return in;
  }
  if (op == "Pad") {
    const int64_t rank = static_cast<int64_t>(in.size());
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> pads, PadsOf(graph, node, rank));
    std::vector<int64_t> out = in;
    for (int64_t d = 0; d < rank; ++d) out[d] += pads[d] + pads[rank + d];
    return out;
  }
  if (op == "Concat") return ConcatShape(graph, node, in);
  if (op == "Conv" || op == "MaxPool" || op == "AveragePool") return WindowedShape(graph, node, in);
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    std::vector<int64_t> out = in;
    for (size_t d = 2; d < out.size(); ++d) out[d] = 1;
    return out;
  }
  if (op == "MatMul") return MatMulShape(graph, node, in);
  if (op == "Gemm" && node.inputs.size() > 1 && graph.shapes.count(node.inputs[1]) &&
      in.size() == 2) {
    const std::vector<int64_t>& b = graph.shapes.at(node.inputs[1]).dims;
    if (b.size() != 2) return NodeError(node, "B is not a matrix");
    return std::vector<int64_t>{in[IntAttribute(node, "transA", 0) ? 1 : 0],
                                b[IntAttribute(node, "transB", 0) ? 0 : 1]};
  }
  if (op == "Flatten") {
    const int64_t rank = static_cast<int64_t>(in.size());
    int64_t axis = IntAttribute(node, "axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return NodeError(node, "axis out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[d];
    return std::vector<int64_t>{outer, inner};
  }
  if (op == "Squeeze" || op == "Unsqueeze" || absl::StartsWith(op, "Reduce")) {
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesOf(graph, node));
    const int64_t rank = static_cast<int64_t>(in.size()) + (op == "Unsqueeze" ? axes.size() : 0);
    for (int64_t& a : axes) {
      TF_ASSIGN_OR_RETURN(a, AxisOf(node, a, rank));
    }
    std::set<int64_t> chosen(axes.begin(), axes.end());
    std::vector<int64_t> out;
    if (op == "Unsqueeze") {
      for (int64_t d = 0, next = 0; d < rank; ++d) {
        out.push_back(chosen.count(d) ? 1 : in[next++]);
      }
      return out;
    }
    const bool squeeze = op == "Squeeze";
    const bool keep = !squeeze && IntAttribute(node, "keepdims", 1) != 0;
    if (!squeeze && chosen.empty() && IntAttribute(node, "noop_with_empty_axes", 0) != 0) {
      return in;
    }
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
      const bool all = chosen.empty() && (!squeeze || in[d] == 1);
      if (!chosen.count(d) && !all) {
        out.push_back(in[d]);
      } else if (keep) {
        out.push_back(1);
      }
    }
    return out;
  }
  if (op == "Expand" && node.inputs.size() == 2) {
    auto shape = graph.constants.find(node.inputs[1]);
    if (shape == graph.constants.end() || !IsIntegerDtype(shape->second.shape.dtype)) {
      return std::nullopt;
    }
    std::optional<std::vector<int64_t>> out = BroadcastShapes(in, shape->second.i64);
    if (!out) return NodeError(node, "the shape does not broadcast with the input's");
    return out;
  }
  if (op == "Gather" && node.inputs.size() == 2 && graph.IsConstant(node.inputs[1])) {
    const int64_t rank = static_cast<int64_t>(in.size());
    TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", 0), rank));
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
  // ONNX's elementwise operators: the first input's shape (Clip's other
  // inputs are bounds), or numpy broadcasting of all of them.
  static const std::set<std::string> kUnary = {"Relu",
                                               "Clip",
                                               "Sqrt",
                                               "Exp",
                                               "Erf",
                                               "Tanh",
                                               "Sigmoid",
                                               "Neg",
                                               "Abs",
                                               "Floor",
                                               "Ceil",
                                               "Reciprocal",
                                               "Elu",
                                               "LeakyRelu",
                                               "HardSigmoid",
                                               "HardSwish",
                                               "Gelu",
                                               "Softmax",
                                               "Cast",
                                               "LayerNormalization",
                                               "InstanceNormalization"};
  static const std::set<std::string> kBroadcasting = {"Add", "Sub", "Mul", "Div", "Pow",  "PRelu",
                                                      "Max", "Min", "Mod", "Sum", "Where"};
  if (kUnary.count(op)) return in;
  if (!kBroadcasting.count(op)) return std::nullopt;
  std::optional<std::vector<int64_t>> out = in;
  for (size_t i = 1; i < node.inputs.size() && out; ++i) {
    if (!graph.shapes.count(node.inputs[i])) return std::nullopt;
    out = BroadcastShapes(*out, graph.shapes.at(node.inputs[i]).dims);
  }
  if (!out) return NodeError(node, "inputs do not broadcast");
  return out;
}

// Split's outputs: the split input or attribute, else equal parts.
[[nodiscard]] absl::Status InferSplit(Graph* graph, const GraphNode& node) {
  if (node.inputs.empty() || !graph->shapes.count(node.inputs[0])) return absl::OkStatus();
  const TensorShape& in = graph->shapes.at(node.inputs[0]);
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", 0), rank));
  std::vector<int64_t> sizes = IntsAttribute(node, "split", {});
  if (sizes.empty()) {
    TF_ASSIGN_OR_RETURN(sizes, IntsInput(*graph, node, 1));
  }
  const int64_t parts = static_cast<int64_t>(node.outputs.size());
  if (sizes.empty()) {
    const int64_t each = (in.dims[axis] + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) {
      sizes.push_back(std::min(each, in.dims[axis] - i * each));
    }
  }
  if (static_cast<int64_t>(sizes.size()) != parts) {
    return NodeError(node, "split sizes and outputs differ in number");
  }
  for (int64_t i = 0; i < parts; ++i) {
    if (node.outputs[i].empty() || graph->shapes.count(node.outputs[i])) continue;
    TensorShape out = in;
    out.dims[axis] = sizes[i];
    graph->shapes[node.outputs[i]] = out;
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// One pass in graph order. `strict` false: a node whose shape cannot be
// worked out yet is left for a later round (Pad's pads or Reshape's shape
// may still be a subgraph that folds once another shape is known);
// CompleteShapes runs one strict pass at its fixpoint to report what
// remains wrong.
[[nodiscard]] absl::Status InferShapesPass(Graph* graph, bool strict) {
  for (const GraphNode& node : graph->nodes) {
    if (node.op_type == "Split") {
      const absl::Status split = InferSplit(graph, node);
      if (strict) TF_RETURN_IF_ERROR(split);
      continue;
    }
    if (node.outputs.empty() || graph->shapes.count(node.outputs[0])) continue;
    absl::StatusOr<std::optional<std::vector<int64_t>>> dims = InferredShape(*graph, node);
    if (!dims.ok()) {
      if (strict) return dims.status();
      continue;
    }
    if (!*dims) continue;
    // Where's values (not its condition) give its element type.
    const size_t typed_input = node.op_type == "Where" ? 1 : 0;
    if (typed_input >= node.inputs.size()) continue;
    const std::string& typed = node.inputs[typed_input];
    if (!graph->shapes.count(typed)) continue;
    graph->shapes[node.outputs[0]] = TensorShape{graph->shapes.at(typed).dtype, **dims};
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::Status InferShapes(Graph* graph) { return InferShapesPass(graph, true); }

[[nodiscard]] absl::StatusOr<Graph> CompleteShapes(Graph graph) {
  // A shape found may let a Shape node fold, whose value may fix another
  // shape: until nothing changes. Each round that goes on has found a shape
  // or folded a node, so this ends (a few rounds for most models; a deep
  // chain of Shape -> Reshape -> Shape, as Swin's windows export, needs one
  // round per link).
  for (;;) {
    const size_t shapes = graph.shapes.size(), nodes = graph.nodes.size();
    TF_ASSIGN_OR_RETURN(graph, FoldConstants(std::move(graph)));
    TF_RETURN_IF_ERROR(InferShapesPass(&graph, /*strict=*/false));
    if (graph.shapes.size() == shapes && graph.nodes.size() == nodes) break;
  }
  TF_RETURN_IF_ERROR(InferShapesPass(&graph, /*strict=*/true));
  return graph;
}

}  // namespace tunefleet
