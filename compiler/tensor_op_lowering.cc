#include "compiler/tensor_op_lowering.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status LowerError(const GraphNode& node, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name, "' (", node.op_type, "): ", what));
}

// A tensor of `dims` seen as [outer, dims[axis], inner] around `axis`
// (negative: counted from the end), as Softmax, ReduceMean and Concat read it.
struct AxisSplit {
  int64_t axis = 0, outer = 1, inner = 1;
};
[[nodiscard]] absl::StatusOr<AxisSplit> SplitAtAxis(const GraphNode& node,
                                                    const std::vector<int64_t>& dims,
                                                    int64_t axis) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return LowerError(node, "axis out of range");
  AxisSplit split;
  split.axis = axis;
  for (int64_t d = 0; d < axis; ++d) split.outer *= dims[d];
  for (int64_t d = axis + 1; d < rank; ++d) split.inner *= dims[d];
  return split;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

// Strides that read `dims` (numpy-broadcast against `out`) at each index of `out`.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> BroadcastStrides(
    const GraphNode& node, const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  const std::vector<int64_t> own = RowMajorStrides(dims);
  const int64_t shift = static_cast<int64_t>(out.size()) - static_cast<int64_t>(dims.size());
  if (shift < 0) return LowerError(node, "an operand has a higher rank than the output");
  std::vector<int64_t> strides(out.size(), 0);
  for (size_t d = shift; d < out.size(); ++d) {
    const int64_t dim = dims[d - shift];
    if (dim == out[d]) {
      strides[d] = own[d - shift];
    } else if (dim != 1) {
      return LowerError(node, "operands do not broadcast to the output shape");
    }
  }
  return strides;
}

// The int64 values of constant input `i` (empty when the input is omitted).
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> IntsInput(const Graph& graph,
                                                             const GraphNode& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i].empty()) return std::vector<int64_t>();
  auto it = graph.constants.find(node.inputs[i]);
  if (it == graph.constants.end() || it->second.shape.dtype != kOnnxInt64) {
    return LowerError(node, absl::StrCat("input '", node.inputs[i],
                                         "' is not an int64 constant (after constant folding)"));
  }
  return it->second.i64;
}

// A constant-mode Pad's pads (input 1, or the attribute before opset 11),
// which must all be zero: what PyTorch exports before an AveragePool.
[[nodiscard]] absl::Status CheckZeroPads(const Graph& graph, const GraphNode& node) {
  if (StringAttribute(node, "mode", "constant") != "constant") {
    return LowerError(node, "only mode 'constant' is supported");
  }
  std::vector<int64_t> pads = IntsAttribute(node, "pads", {});
  if (node.inputs.size() > 1) {
    TF_ASSIGN_OR_RETURN(pads, IntsInput(graph, node, 1));
  }
  for (int64_t p : pads) {
    if (p != 0) return LowerError(node, "only all-zero pads are supported");
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<LoweredTensorOp> LowerSlice(const Graph& graph, const GraphNode& node,
                                                         const std::vector<int64_t>& in) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> starts, IntsInput(graph, node, 1));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> ends, IntsInput(graph, node, 2));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, IntsInput(graph, node, 3));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> steps, IntsInput(graph, node, 4));
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size())) {
    return LowerError(node, "starts, ends, axes and steps differ in length");
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  LoweredTensorOp lowered;
  PlanStep& step = lowered.step;
  step.out_shape = in;
  step.a_strides = RowMajorStrides(in);
  const std::vector<int64_t> strides = step.a_strides;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = axes.empty() ? static_cast<int64_t>(i) : axes[i];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return LowerError(node, "axis out of range");
    const int64_t dim = in[axis], stride = steps.empty() ? 1 : steps[i];
    if (stride == 0) return LowerError(node, "step 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (stride > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t count = stride > 0 ? std::max<int64_t>(0, (end - start + stride - 1) / stride)
                                     : std::max<int64_t>(0, (start - end - stride - 1) / -stride);
    step.out_shape[axis] = count;
    step.a_offset += start * strides[axis];
    step.a_strides[axis] = strides[axis] * stride;
  }
  step.op = "strided_copy";
  return lowered;
}

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

// The output shape of `node` from its inputs' shapes and constants, or
// empty when unknown here.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> InferredShape(const Graph& graph,
                                                                 const GraphNode& node) {
  const std::string& op = node.op_type;
  if (node.inputs.empty() || !graph.shapes.count(node.inputs[0])) return std::vector<int64_t>();
  const std::vector<int64_t> in = graph.shapes.at(node.inputs[0]).dims;
  if (op == "Slice") {
    TF_ASSIGN_OR_RETURN(LoweredTensorOp slice, LowerSlice(graph, node, in));
    return slice.step.out_shape;
  }
  if (op == "BatchNormalization") return in;
  if (op == "Pad") {
    TF_RETURN_IF_ERROR(CheckZeroPads(graph, node));
    return in;
  }
  if (op == "Concat") {
    const int64_t rank = static_cast<int64_t>(in.size());
    TF_ASSIGN_OR_RETURN(const AxisSplit split,
                        SplitAtAxis(node, in, IntAttribute(node, "axis", 0)));
    const int64_t axis = split.axis;
    std::vector<int64_t> out = in;
    out[axis] = 0;
    for (const std::string& input : node.inputs) {
      if (!graph.shapes.count(input)) return std::vector<int64_t>();
      const std::vector<int64_t>& dims = graph.shapes.at(input).dims;
      if (static_cast<int64_t>(dims.size()) != rank) {
        return LowerError(node, "inputs of other ranks");
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && dims[d] != in[d]) {
          return LowerError(node, "inputs differ outside the concatenation axis");
        }
      }
      out[axis] += dims[axis];
    }
    return out;
  }
  if (op == "Transpose") {
    std::vector<int64_t> out;
    for (int64_t p : IntsAttribute(node, "perm", {})) {
      if (p < 0 || p >= static_cast<int64_t>(in.size())) return LowerError(node, "bad perm");
      out.push_back(in[p]);
    }
    return out.size() == in.size() ? out : std::vector<int64_t>();
  }
  if (op == "Reshape") {
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> out, IntsInput(graph, node, 1));
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
  static const std::set<std::string> kElementwise = {
      "Add",  "Sub",     "Mul", "Div",  "Pow",  "Sqrt",     "Exp",         "Erf",
      "Tanh", "Sigmoid", "Neg", "Relu", "Clip", "Identity", "HardSigmoid", "HardSwish"};
  if (!kElementwise.count(op)) return std::vector<int64_t>();
  std::vector<int64_t> out = in;
  for (size_t i = 1; i < node.inputs.size() && (op != "Clip"); ++i) {
    if (!graph.shapes.count(node.inputs[i])) return std::vector<int64_t>();
    out = Broadcast(out, graph.shapes.at(node.inputs[i]).dims);
  }
  return out;
}

}  // namespace

[[nodiscard]] absl::Status InferTensorOpShapes(Graph* graph) {
  for (const GraphNode& node : graph->nodes) {
    if (node.outputs.empty() || graph->shapes.count(node.outputs[0])) continue;
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, InferredShape(*graph, node));
    if (dims.empty()) continue;
    graph->shapes[node.outputs[0]] = TensorShape{graph->shapes.at(node.inputs[0]).dtype, dims};
  }
  return absl::OkStatus();
}

const std::vector<std::string>& TensorOperators() {
  static const std::vector<std::string> ops = {"Transpose",
                                               "Slice",
                                               "Add/Sub/Mul/Div/Pow (broadcasting)",
                                               "Sqrt",
                                               "Exp",
                                               "Erf",
                                               "Tanh",
                                               "Sigmoid",
                                               "Neg",
                                               "HardSigmoid",
                                               "HardSwish",
                                               "Concat",
                                               "ReduceMean (one axis)",
                                               "BatchNormalization (anywhere: inference form)",
                                               "Pad (constant, all-zero pads)"};
  return ops;
}

[[nodiscard]] absl::StatusOr<std::optional<LoweredTensorOp>> LowerTensorOp(const Graph& graph,
                                                                           const GraphNode& node) {
  static const std::map<std::string, std::string> kBinary = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Pow", "pow"}};
  static const std::map<std::string, std::string> kUnary = {
      {"Sqrt", "sqrt"},          {"Exp", "exp"}, {"Erf", "erf"},   {"Tanh", "tanh"},
      {"Sigmoid", "sigmoid"},    {"Neg", "neg"}, {"Relu", "relu"}, {"HardSigmoid", "hardsigmoid"},
      {"HardSwish", "hardswish"}};
  const std::string& op = node.op_type;
  const bool known = op == "Transpose" || op == "Slice" || op == "ReduceMean" || op == "Softmax" ||
                     op == "Concat" || op == "BatchNormalization" || op == "Pad" ||
                     kBinary.count(op) > 0 || kUnary.count(op) > 0;
  if (!known) return std::optional<LoweredTensorOp>();
  if (node.inputs.empty() || node.outputs.empty()) return LowerError(node, "has no input/output");
  TF_ASSIGN_OR_RETURN(TensorShape in, graph.ShapeOf(node.inputs[0], &node));
  TF_ASSIGN_OR_RETURN(TensorShape out, graph.ShapeOf(node.outputs[0], &node));
  if (in.dtype != kOnnxFloat || out.dtype != kOnnxFloat) {
    return LowerError(node, "only float32 tensors are supported");
  }
  LoweredTensorOp lowered;
  PlanStep& step = lowered.step;
  step.node = node.name;
  step.out_shape = out.dims;
  lowered.operands = {node.inputs[0]};
  if (op == "Transpose") {
    const int64_t rank = static_cast<int64_t>(in.dims.size());
    std::vector<int64_t> reversed;
    for (int64_t d = rank - 1; d >= 0; --d) reversed.push_back(d);
    const std::vector<int64_t> perm = IntsAttribute(node, "perm", reversed);
    if (static_cast<int64_t>(perm.size()) != rank) return LowerError(node, "perm of wrong rank");
    const std::vector<int64_t> strides = RowMajorStrides(in.dims);
    step.op = "strided_copy";
    for (int64_t p : perm) {
      if (p < 0 || p >= rank) return LowerError(node, "perm out of range");
      step.a_strides.push_back(strides[p]);
    }
  } else if (op == "Slice") {
    TF_ASSIGN_OR_RETURN(LoweredTensorOp slice, LowerSlice(graph, node, in.dims));
    if (slice.step.out_shape != out.dims) {
      return LowerError(
          node, absl::StrCat("sliced shape disagrees with shape inference's ", out.ToString()));
    }
    step.op = slice.step.op;
    step.a_strides = slice.step.a_strides;
    step.a_offset = slice.step.a_offset;
  } else if (kBinary.count(op)) {
    if (node.inputs.size() != 2) return LowerError(node, "needs 2 inputs");
    TF_ASSIGN_OR_RETURN(TensorShape b, graph.ShapeOf(node.inputs[1], &node));
    if (b.dtype != kOnnxFloat) return LowerError(node, "only float32 tensors are supported");
    step.op = "broadcast";
    step.func = kBinary.at(op);
    TF_ASSIGN_OR_RETURN(step.a_strides, BroadcastStrides(node, in.dims, out.dims));
    TF_ASSIGN_OR_RETURN(step.b_strides, BroadcastStrides(node, b.dims, out.dims));
    lowered.operands.push_back(node.inputs[1]);
  } else if (kUnary.count(op)) {
    step.op = "unary";
    step.func = kUnary.at(op);
    if (op == "HardSigmoid") {  // ONNX's defaults; PyTorch exports alpha 1/6
      step.alpha = node.attributes.value("alpha", 0.2f);
      step.beta = node.attributes.value("beta", 0.5f);
    } else if (op == "HardSwish") {  // x * HardSigmoid(x) with alpha 1/6, beta 1/2
      step.alpha = 1.0f / 6.0f;
      step.beta = 0.5f;
    }
  } else if (op == "Concat") {
    // in_shape: [outer, inner, extent of input 0 along the axis, input 1's, ...].
    const int64_t rank = static_cast<int64_t>(out.dims.size());
    TF_ASSIGN_OR_RETURN(const AxisSplit split,
                        SplitAtAxis(node, out.dims, IntAttribute(node, "axis", 0)));
    const int64_t axis = split.axis, outer = split.outer, inner = split.inner;
    int64_t total = 0;
    step.op = "concat";
    step.in_shape = {outer, inner};
    lowered.operands.clear();
    for (const std::string& input : node.inputs) {
      TF_ASSIGN_OR_RETURN(TensorShape s, graph.ShapeOf(input, &node));
      if (s.dtype != kOnnxFloat) return LowerError(node, "only float32 tensors are supported");
      if (static_cast<int64_t>(s.dims.size()) != rank ||
          s.NumElements() != outer * inner * s.dims[axis]) {
        return LowerError(node, absl::StrCat("input '", input, "' ", s.ToString(),
                                             " does not fit the output ", out.ToString()));
      }
      step.in_shape.push_back(s.dims[axis]);
      total += s.dims[axis];
      lowered.operands.push_back(input);
    }
    if (total != out.dims[axis])
      return LowerError(node, "input extents do not sum to the output's");
  } else if (op == "Pad") {  // all-zero pads: a copy
    TF_RETURN_IF_ERROR(CheckZeroPads(graph, node));
    step.op = "strided_copy";
    step.a_strides = RowMajorStrides(in.dims);
  } else if (op == "BatchNormalization") {
    // One that no Conv absorbed (DenseNet's pre-activation): inference
    // form, per channel (axis 1) of [N, C, ...]; operands x, scale, B, mean,
    // var; in_shape [N, C, positions per channel]; alpha: epsilon.
    if (node.inputs.size() != 5) return LowerError(node, "needs 5 inputs");
    if (in.dims.size() < 2) return LowerError(node, "needs an input of rank 2 or more");
    if (IntAttribute(node, "training_mode", 0) != 0) {
      return LowerError(node, "training_mode is not supported");
    }
    int64_t inner = 1;
    for (size_t d = 2; d < in.dims.size(); ++d) inner *= in.dims[d];
    for (size_t i = 1; i < 5; ++i) {
      TF_ASSIGN_OR_RETURN(TensorShape s, graph.ShapeOf(node.inputs[i], &node));
      if (s.dtype != kOnnxFloat || s.NumElements() != in.dims[1]) {
        return LowerError(node, absl::StrCat("input '", node.inputs[i], "' ", s.ToString(),
                                             " is not one float per channel"));
      }
      lowered.operands.push_back(node.inputs[i]);
    }
    step.op = "batch_norm";
    step.in_shape = {in.dims[0], in.dims[1], inner};
    step.alpha = node.attributes.value("epsilon", 1e-5f);
  } else if (op == "Softmax") {
    TF_ASSIGN_OR_RETURN(const AxisSplit split,
                        SplitAtAxis(node, in.dims, IntAttribute(node, "axis", -1)));
    step.op = "softmax";
    step.in_shape = {split.outer, in.dims[split.axis], split.inner};
  } else {  // ReduceMean
    std::vector<int64_t> axes = IntsAttribute(node, "axes", {});
    if (axes.empty()) {
      TF_ASSIGN_OR_RETURN(axes, IntsInput(graph, node, 1));
    }
    if (axes.size() != 1) return LowerError(node, "only ReduceMean over one axis is supported");
    TF_ASSIGN_OR_RETURN(const AxisSplit split, SplitAtAxis(node, in.dims, axes[0]));
    step.op = "reduce_mean";
    step.in_shape = {split.outer, in.dims[split.axis], split.inner};
  }
  return std::optional<LoweredTensorOp>(std::move(lowered));
}

}  // namespace tunefleet
