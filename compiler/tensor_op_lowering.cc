#include "compiler/tensor_op_lowering.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// A tensor of `dims` seen as [outer, dims[axis], inner] around `axis`
// (negative: counted from the end), as Softmax, ReduceMean and Concat read it.
struct AxisSplit {
  int64_t axis = 0, outer = 1, inner = 1;
};
[[nodiscard]] absl::StatusOr<AxisSplit> SplitAtAxis(const GraphNode& node,
                                                    const std::vector<int64_t>& dims,
                                                    int64_t axis) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  AxisSplit split;
  TF_ASSIGN_OR_RETURN(split.axis, AxisOf(node, axis, rank));
  for (int64_t d = 0; d < split.axis; ++d) split.outer *= dims[d];
  for (int64_t d = split.axis + 1; d < rank; ++d) split.inner *= dims[d];
  return split;
}

// Strides that read `dims` (numpy-broadcast against `out`) at each index of `out`.
[[nodiscard]] absl::StatusOr<std::vector<int64_t>> BroadcastStrides(
    const GraphNode& node, const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  const std::vector<int64_t> own = RowMajorStrides(dims);
  const int64_t shift = static_cast<int64_t>(out.size()) - static_cast<int64_t>(dims.size());
  if (shift < 0) return NodeError(node, "an operand has a higher rank than the output");
  std::vector<int64_t> strides(out.size(), 0);
  for (size_t d = shift; d < out.size(); ++d) {
    const int64_t dim = dims[d - shift];
    if (dim == out[d]) {
      strides[d] = own[d - shift];
    } else if (dim != 1) {
      return NodeError(node, "operands do not broadcast to the output shape");
    }
  }
  return strides;
}

[[nodiscard]] absl::StatusOr<LoweredTensorOp> LowerSlice(const Graph& graph, const GraphNode& node,
                                                         const std::vector<int64_t>& in) {
  TF_ASSIGN_OR_RETURN(SliceWindow window, SliceWindowOf(graph, node, in));
  LoweredTensorOp lowered;
  lowered.step.op = StepOp::kStridedCopy;
  lowered.step.out_shape = std::move(window.out_shape);
  lowered.step.a_offset = window.offset;
  lowered.step.a_strides = std::move(window.strides);
  return lowered;
}

}  // namespace

namespace {

// The step's fields for one operator, after LowerTensorOp's common checks.
[[nodiscard]] absl::Status LowerTranspose(const Graph&, const GraphNode& node,
                                          const TensorShape& in, const TensorShape&,
                                          LoweredTensorOp& lowered) {
  PlanStep& step = lowered.step;
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  std::vector<int64_t> reversed;
  for (int64_t d = rank - 1; d >= 0; --d) reversed.push_back(d);
  const std::vector<int64_t> perm = IntsAttribute(node, "perm", reversed);
  if (static_cast<int64_t>(perm.size()) != rank) return NodeError(node, "perm of wrong rank");
  const std::vector<int64_t> strides = RowMajorStrides(in.dims);
  step.op = StepOp::kStridedCopy;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank) return NodeError(node, "perm out of range");
    step.a_strides.push_back(strides[p]);
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerSliceOp(const Graph& graph, const GraphNode& node,
                                        const TensorShape& in, const TensorShape& out,
                                        LoweredTensorOp& lowered) {
  TF_ASSIGN_OR_RETURN(LoweredTensorOp slice, LowerSlice(graph, node, in.dims));
  if (slice.step.out_shape != out.dims) {
    return NodeError(
        node, absl::StrCat("sliced shape disagrees with shape inference's ", out.ToString()));
  }
  lowered.step.op = slice.step.op;
  lowered.step.a_strides = slice.step.a_strides;
  lowered.step.a_offset = slice.step.a_offset;
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerBinary(const Graph& graph, const GraphNode& node,
                                       const TensorShape& in, const TensorShape& out,
                                       LoweredTensorOp& lowered) {
  static const std::map<std::string, BinaryFunc> kBinary = {
      {"Add", BinaryFunc::kAdd}, {"Sub", BinaryFunc::kSub},       {"Mul", BinaryFunc::kMul},
      {"Div", BinaryFunc::kDiv}, {"Pow", BinaryFunc::kPow},       {"PRelu", BinaryFunc::kPrelu},
      {"Max", BinaryFunc::kMax}, {"Min", BinaryFunc::kMin},       {"Mod", BinaryFunc::kFloorMod},
      {"Sum", BinaryFunc::kAdd}, {kSelectOp, BinaryFunc::kSelect}};
  auto func = kBinary.find(node.op_type);
  if (func == kBinary.end()) return NodeError(node, "not a binary operator");
  if (node.inputs.size() == 1 &&
      (node.op_type == "Max" || node.op_type == "Min" || node.op_type == "Sum")) {
    lowered.step.op = StepOp::kStridedCopy;  // the maximum (sum) of one tensor: itself
    lowered.step.a_strides = RowMajorStrides(in.dims);
    return absl::OkStatus();
  }
  if (node.inputs.size() != 2)
    return NodeError(node, "needs 2 inputs (import makes a chain of more)");
  TF_ASSIGN_OR_RETURN(TensorShape b, graph.ShapeOf(node.inputs[1], &node));
  // An integer constant (Pow's exponent) is read as floats (passes/emit_plan.h).
  if (b.dtype != kOnnxFloat && !(IsIntegerDtype(b.dtype) && graph.IsConstant(node.inputs[1]))) {
    return NodeError(node, "only float32 tensors are supported");
  }
  PlanStep& step = lowered.step;
  step.op = StepOp::kBroadcast;
  step.binary = func->second;
  if (node.op_type == "Mod" && IntAttribute(node, "fmod", 0) != 0) step.binary = BinaryFunc::kMod;
  if (node.op_type == "Mod" && IntAttribute(node, "fmod", 0) == 0) {
    return NodeError(node, "float Mod needs fmod=1 (ONNX)");
  }
  TF_ASSIGN_OR_RETURN(step.a_strides, BroadcastStrides(node, in.dims, out.dims));
  TF_ASSIGN_OR_RETURN(step.b_strides, BroadcastStrides(node, b.dims, out.dims));
  lowered.operands.push_back(node.inputs[1]);
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerConcat(const Graph& graph, const GraphNode& node,
                                       const TensorShape&, const TensorShape& out,
                                       LoweredTensorOp& lowered) {
  // in_shape: [outer, inner, extent of input 0 along the axis, input 1's, ...].
  PlanStep& step = lowered.step;
  const int64_t rank = static_cast<int64_t>(out.dims.size());
  TF_ASSIGN_OR_RETURN(const AxisSplit split,
                      SplitAtAxis(node, out.dims, IntAttribute(node, "axis", 0)));
  const int64_t axis = split.axis, outer = split.outer, inner = split.inner;
  int64_t total = 0;
  step.op = StepOp::kConcat;
  step.in_shape = {outer, inner};
  lowered.operands.clear();
  for (const std::string& input : node.inputs) {
    TF_ASSIGN_OR_RETURN(TensorShape s, graph.ShapeOf(input, &node));
    if (s.dtype != kOnnxFloat) return NodeError(node, "only float32 tensors are supported");
    if (static_cast<int64_t>(s.dims.size()) != rank ||
        s.NumElements() != outer * inner * s.dims[axis]) {
      return NodeError(node, absl::StrCat("input '", input, "' ", s.ToString(),
                                          " does not fit the output ", out.ToString()));
    }
    step.in_shape.push_back(s.dims[axis]);
    total += s.dims[axis];
    lowered.operands.push_back(input);
  }
  if (total != out.dims[axis]) return NodeError(node, "input extents do not sum to the output's");
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerPad(const Graph& graph, const GraphNode& node,
                                    const TensorShape& in, const TensorShape& out,
                                    LoweredTensorOp& lowered) {
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> pads, PadsOf(graph, node, rank));
  PlanStep& step = lowered.step;
  const std::string mode = StringAttribute(node, "mode", "constant");
  if (mode == "constant") {
    step.pad_mode = PadMode::kConstant;
  } else if (mode == "reflect") {
    step.pad_mode = PadMode::kReflect;
  } else if (mode == "edge") {
    step.pad_mode = PadMode::kEdge;
  } else {
    return NodeError(node, absl::StrCat("mode '", mode, "' is not supported"));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (pads[d] < 0 || pads[rank + d] < 0) {
      return NodeError(node, "negative pads (cropping) are not supported");
    }
    if (in.dims[d] + pads[d] + pads[rank + d] != out.dims[d]) {
      return NodeError(node, "pads disagree with the output shape");
    }
    if (step.pad_mode == PadMode::kReflect && in.dims[d] == 1 && pads[d] + pads[rank + d] > 0) {
      return NodeError(node, "reflect padding of an axis of one value");
    }
    if (step.pad_mode == PadMode::kReflect &&
        (pads[d] >= in.dims[d] || pads[rank + d] >= in.dims[d])) {
      return NodeError(node, "reflect pads as wide as the axis");
    }
  }
  step.alpha = node.attributes.value("value", 0.0f);
  if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
    auto value = graph.constants.find(node.inputs[2]);
    if (value == graph.constants.end() || value->second.shape.dtype != kOnnxFloat ||
        value->second.f32.size() != 1) {
      return NodeError(node, "constant_value is not a float32 scalar constant");
    }
    step.alpha = value->second.f32[0];
  }
  step.op = StepOp::kPad;
  step.in_shape = in.dims;
  step.pads = std::move(pads);
  return absl::OkStatus();
}

// canonicalize.h's kDilateOp: a constant-0 pad whose input positions are
// `strides` apart (step.strides, one per axis) and whose pads may crop.
[[nodiscard]] absl::Status LowerDilate(const Graph&, const GraphNode& node, const TensorShape& in,
                                       const TensorShape& out, LoweredTensorOp& lowered) {
  const std::vector<int64_t> strides = IntsAttribute(node, "strides", {1, 1});
  const std::vector<int64_t> pads = IntsAttribute(node, "pads", {0, 0, 0, 0});
  if (in.dims.size() != 4 || strides.size() != 2 || pads.size() != 4) {
    return NodeError(node, "needs a 4-D input, 2 strides and 4 pads");
  }
  PlanStep& step = lowered.step;
  step.op = StepOp::kPad;
  step.pad_mode = PadMode::kConstant;
  step.in_shape = in.dims;
  step.strides = {1, 1, strides[0], strides[1]};
  step.pads = {0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]};
  for (size_t d = 0; d < 4; ++d) {
    if ((in.dims[d] - 1) * step.strides[d] + 1 + step.pads[d] + step.pads[4 + d] != out.dims[d]) {
      return NodeError(node, "pads disagree with the output shape");
    }
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerSoftmax(const Graph&, const GraphNode& node, const TensorShape& in,
                                        const TensorShape&, LoweredTensorOp& lowered) {
  TF_ASSIGN_OR_RETURN(const AxisSplit split,
                      SplitAtAxis(node, in.dims, IntAttribute(node, "axis", -1)));
  lowered.step.op = StepOp::kSoftmax;
  lowered.step.in_shape = {split.outer, in.dims[split.axis], split.inner};
  return absl::OkStatus();
}

[[nodiscard]] absl::Status LowerReduce(const Graph& graph, const GraphNode& node,
                                       const TensorShape& in, const TensorShape& out,
                                       LoweredTensorOp& lowered) {
  static const std::map<std::string, ReduceFunc> kFuncs = {{"ReduceMean", ReduceFunc::kMean},
                                                           {"ReduceSum", ReduceFunc::kSum},
                                                           {"ReduceMax", ReduceFunc::kMax},
                                                           {"ReduceMin", ReduceFunc::kMin}};
  auto func = kFuncs.find(node.op_type);
  if (func == kFuncs.end()) return NodeError(node, "not a reduction");
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReduceAxes(graph, node, in.dims));
  PlanStep& step = lowered.step;
  if (axes.empty()) {  // noop_with_empty_axes: the input as it is
    step.op = StepOp::kStridedCopy;
    step.a_strides = RowMajorStrides(in.dims);
    step.out_shape = in.dims;
    if (out.dims != in.dims) return NodeError(node, "output shape disagrees with an identity");
    return absl::OkStatus();
  }
  int64_t outer = 1, axis = 1, inner = 1;
  for (int64_t d = 0; d < axes.front(); ++d) outer *= in.dims[d];
  for (int64_t d : axes) axis *= in.dims[d];
  for (int64_t d = axes.back() + 1; d < static_cast<int64_t>(in.dims.size()); ++d) {
    inner *= in.dims[d];
  }
  step.op = StepOp::kReduce;
  step.reduce = func->second;
  step.in_shape = {outer, axis, inner};
  return absl::OkStatus();
}

// LayerNormalization over the axes from `axis` on: inputs X, Scale, B
// (either of the last two may be empty: 1 and 0).
// Expand: the input broadcast to the output's shape, a strided copy with
// stride 0 along the broadcast axes.
[[nodiscard]] absl::Status LowerExpand(const Graph&, const GraphNode& node, const TensorShape& in,
                                       const TensorShape& out, LoweredTensorOp& lowered) {
  lowered.step.op = StepOp::kStridedCopy;
  TF_ASSIGN_OR_RETURN(lowered.step.a_strides, BroadcastStrides(node, in.dims, out.dims));
  return absl::OkStatus();
}

// Gather of an activation along an axis at constant indices: a strided
// copy when the indices step evenly (a scalar index: token selection; a
// range).
[[nodiscard]] absl::Status LowerGather(const Graph& graph, const GraphNode& node,
                                       const TensorShape& in, const TensorShape& out,
                                       LoweredTensorOp& lowered) {
  if (node.inputs.size() != 2) return NodeError(node, "needs data and indices");
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", 0), rank));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= in.dims[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= in.dims[d];
  auto indices = graph.constants.find(node.inputs[1]);
  if (indices == graph.constants.end()) {
    // Indices known at run time (an embedding's token ids): a model input
    // of integers (the runtime holds them as exact floats and checks each
    // against the axis as it runs).
    TF_ASSIGN_OR_RETURN(TensorShape index_shape, graph.ShapeOf(node.inputs[1], &node));
    if (!IsIntegerDtype(index_shape.dtype) ||
        std::find(graph.inputs.begin(), graph.inputs.end(), node.inputs[1]) == graph.inputs.end()) {
      return NodeError(node, "indices computed at run time other than a model input of integers");
    }
    if (index_shape.NumElements() * outer * inner != out.NumElements()) {
      return NodeError(node, "output size disagrees with shape inference");
    }
    lowered.step.op = StepOp::kGather;
    lowered.step.in_shape = {outer, in.dims[axis], inner};
    lowered.operands.push_back(node.inputs[1]);
    return absl::OkStatus();
  }
  if (!IsIntegerDtype(indices->second.shape.dtype)) return NodeError(node, "indices not integers");
  std::vector<int64_t> index = indices->second.i64;
  for (int64_t& i : index) {
    if (i < 0) i += in.dims[axis];
    if (i < 0 || i >= in.dims[axis]) return NodeError(node, "index out of range");
  }
  PlanStep& step = lowered.step;
  int64_t step_size = index.size() > 1 ? index[1] - index[0] : 1;
  bool even = indices->second.shape.dims.size() <= 1 && !index.empty();
  for (size_t i = 1; i < index.size(); ++i) even &= index[i] - index[i - 1] == step_size;
  if (!even) {
    // Any other constant indices: rows picked one by one (the output's
    // index dims are the indices' own, in order).
    step.op = StepOp::kGather;
    step.in_shape = {outer, in.dims[axis], inner};
    step.indices = std::move(index);
    if (static_cast<int64_t>(step.indices.size()) * outer * inner != out.NumElements()) {
      return NodeError(node, "output size disagrees with shape inference");
    }
    return absl::OkStatus();
  }
  const std::vector<int64_t> strides = RowMajorStrides(in.dims);
  step.op = StepOp::kStridedCopy;
  step.a_offset = index[0] * strides[axis];
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) {
      if (indices->second.shape.dims.empty()) continue;  // a scalar index drops the axis
      step.a_strides.push_back(strides[d] * step_size);
    } else {
      step.a_strides.push_back(strides[d]);
    }
  }
  if (step.a_strides.size() != out.dims.size()) {
    return NodeError(node, "output rank disagrees with shape inference");
  }
  return absl::OkStatus();
}

}  // namespace

const TensorOpLowering kLowerTranspose = &LowerTranspose;
const TensorOpLowering kLowerSlice = &LowerSliceOp;
const TensorOpLowering kLowerBinary = &LowerBinary;
const TensorOpLowering kLowerConcat = &LowerConcat;
const TensorOpLowering kLowerPad = &LowerPad;
const TensorOpLowering kLowerDilate = &LowerDilate;
const TensorOpLowering kLowerSoftmax = &LowerSoftmax;
const TensorOpLowering kLowerReduce = &LowerReduce;
const TensorOpLowering kLowerGather = &LowerGather;
const TensorOpLowering kLowerExpand = &LowerExpand;

std::optional<std::vector<int64_t>> ChannelGatherOf(const Graph& graph, const GraphNode& node) {
  if (node.inputs.empty() || node.outputs.empty()) return std::nullopt;
  const std::vector<int64_t> in = graph.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims;
  if (in.size() != 4 || in[1] < 1) return std::nullopt;
  if (node.op_type == "Gather") {
    auto indices = graph.constants.find(node.inputs.size() == 2 ? node.inputs[1] : "");
    const absl::StatusOr<int64_t> axis = AxisOf(node, IntAttribute(node, "axis", 0), 4);
    if (!axis.ok() || *axis != 1) return std::nullopt;
    if (indices == graph.constants.end() || !IsIntegerDtype(indices->second.shape.dtype) ||
        indices->second.shape.dims.size() != 1 || indices->second.i64.empty()) {
      return std::nullopt;
    }
    std::vector<int64_t> map = indices->second.i64;
    for (int64_t& i : map) {
      if (i < 0) i += in[1];
      if (i < 0 || i >= in[1]) return std::nullopt;  // LowerGather names it
    }
    return map;
  }
  if (node.op_type != "Slice") return std::nullopt;
  absl::StatusOr<SliceWindow> window = SliceWindowOf(graph, node, in);
  if (!window.ok()) return std::nullopt;
  const std::vector<int64_t>& out = window->out_shape;
  const int64_t plane = in[2] * in[3];
  const std::vector<int64_t>& strides = window->strides;  // every axis but C as it was
  if (plane < 1 || out[0] != in[0] || out[2] != in[2] || out[3] != in[3] || out[1] < 1 ||
      (in[0] > 1 && strides[0] != in[1] * plane) || (in[2] > 1 && strides[2] != in[3]) ||
      (in[3] > 1 && strides[3] != 1) || strides[1] % plane != 0 || window->offset % plane != 0) {
    return std::nullopt;
  }
  const int64_t first = window->offset / plane, step = strides[1] / plane;
  std::vector<int64_t> map;
  for (int64_t j = 0; j < out[1]; ++j) map.push_back(first + j * step);
  return map;
}

int ChannelOperandFirst(const Graph& graph, const GraphNode& node) {
  if (node.inputs.size() != 2) return -1;
  const TensorShape a = graph.ShapeOf(node.inputs[0]).value_or(TensorShape{0, {}});
  const TensorShape b = graph.ShapeOf(node.inputs[1]).value_or(TensorShape{0, {}});
  // The activation is the bigger operand; only Add and Mul commute.
  if (a.dims.size() == 4 && a.NumElements() >= b.NumElements()) return 0;
  const bool commutes = node.op_type == "Mul" || node.op_type == "Add";
  if (b.dims.size() == 4 && b.NumElements() > a.NumElements() && commutes) return 1;
  return -1;
}

std::optional<BinaryFunc> ChannelBinaryOf(const Graph& graph, const GraphNode& node) {
  static const std::map<std::string, BinaryFunc> kFuncs = {{"Add", BinaryFunc::kAdd},
                                                           {"Sub", BinaryFunc::kSub},
                                                           {"Mul", BinaryFunc::kMul},
                                                           {"Div", BinaryFunc::kDiv}};
  auto func = kFuncs.find(node.op_type);
  if (func == kFuncs.end() || node.inputs.size() != 2) return std::nullopt;
  const int first = ChannelOperandFirst(graph, node);
  if (first < 0 || graph.IsConstant(node.inputs[first])) return std::nullopt;
  const TensorShape none{0, {}};
  const std::vector<int64_t> a = graph.ShapeOf(node.inputs[first]).value_or(none).dims;
  const TensorShape b_shape = graph.ShapeOf(node.inputs[1 - first]).value_or(none);
  const std::vector<int64_t> out = graph.ShapeOf(node.outputs[0]).value_or(none).dims;
  std::vector<int64_t> b = b_shape.dims;
  if (a.size() != 4 || out != a || b.size() < 3 || b.size() > 4 || b_shape.dtype != kOnnxFloat) {
    return std::nullopt;
  }
  if (b.size() == 3) b.insert(b.begin(), 1);
  if ((b[0] != 1 && b[0] != a[0]) || b[1] != a[1] || b[2] != 1 || b[3] != 1) return std::nullopt;
  return func->second;
}

[[nodiscard]] absl::StatusOr<DenseOperands> DenseOperandsOf(const Graph& graph,
                                                            const GraphNode& node,
                                                            const std::vector<float>& b, int64_t n,
                                                            int64_t k) {
  if (static_cast<int64_t>(b.size()) != n * k) return NodeError(node, "B does not hold N x K");
  const bool gemm = node.op_type == "Gemm";
  const bool trans_b = gemm && IntAttribute(node, "transB", 0) != 0;
  const float alpha = node.attributes.value("alpha", 1.0f);
  DenseOperands dense;
  dense.nk.resize(n * k);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c) {
      dense.nk[r * k + c] = alpha * (trans_b ? b[r * k + c] : b[c * n + r]);
    }
  }
  if (gemm && node.inputs.size() > 2 && !node.inputs[2].empty()) {
    auto c = graph.constants.find(node.inputs[2]);
    if (c == graph.constants.end() || c->second.shape.dtype != kOnnxFloat) {
      return NodeError(node, "C is not a float32 constant");
    }
    const std::vector<float>& values = c->second.f32;
    if (static_cast<int64_t>(values.size()) == n) dense.bias = values;
    if (values.size() == 1) dense.bias.assign(n, values[0]);
    for (float& v : dense.bias) v *= node.attributes.value("beta", 1.0f);
  }
  return dense;
}

bool IsNoOpPad(const Graph& graph, const GraphNode& node) {
  if (node.op_type != "Pad" || node.inputs.empty()) return false;
  const size_t rank = graph.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims.size();
  const absl::StatusOr<std::vector<int64_t>> pads = PadsOf(graph, node, static_cast<int64_t>(rank));
  return rank > 0 && pads.ok() &&
         std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; });
}

[[nodiscard]] absl::StatusOr<ElementType> InputElementType(const std::string& input, int dtype) {
  if (dtype == kOnnxFloat) return ElementType::kFloat32;
  if (dtype == kOnnxInt64) return ElementType::kInt64;
  if (dtype == kOnnxInt32) return ElementType::kInt32;
  return absl::InvalidArgumentError(absl::StrCat("model input '", input, "' has ONNX element type ",
                                                 dtype,
                                                 " (float32, int64 and int32 are supported)"));
}

int ChannelsLastTransposeOf(const Graph& graph, const GraphNode& node) {
  if (node.op_type != "Transpose" || node.inputs.empty() || node.outputs.empty()) return 0;
  absl::StatusOr<TensorShape> in = graph.ShapeOf(node.inputs[0], &node);
  if (!in.ok() || in->dims.size() != 4 || in->dtype != kOnnxFloat) return 0;
  const std::vector<int64_t> perm = IntsAttribute(node, "perm", {});
  if (perm == std::vector<int64_t>{0, 2, 3, 1}) return 1;
  if (perm == std::vector<int64_t>{0, 3, 1, 2}) return -1;
  return 0;
}

[[nodiscard]] absl::StatusOr<std::vector<float>> GemmMatrixBias(const Graph& graph,
                                                                const GraphNode& node) {
  auto c = graph.constants.find(node.inputs.size() > 2 ? node.inputs[2] : "");
  if (c == graph.constants.end() || c->second.shape.dtype != kOnnxFloat) {
    return NodeError(node, "C is not a float32 constant");
  }
  TF_ASSIGN_OR_RETURN(TensorShape out, graph.ShapeOf(node.outputs[0], &node));
  std::vector<int64_t> dims = c->second.shape.dims;
  if (out.dims.size() != 2 || dims.size() > 2) return NodeError(node, "C of rank above 2");
  while (dims.size() < 2) dims.insert(dims.begin(), 1);
  const int64_t rows = out.dims[0], cols = out.dims[1];
  if ((dims[0] != 1 && dims[0] != rows) || (dims[1] != 1 && dims[1] != cols)) {
    return NodeError(node, absl::StrCat("C ", c->second.shape.ToString(), " does not broadcast to ",
                                        out.ToString()));
  }
  const float beta = node.attributes.value("beta", 1.0f);
  std::vector<float> full(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      full[r * cols + col] =
          beta * c->second.f32[(dims[0] == 1 ? 0 : r) * dims[1] + (dims[1] == 1 ? 0 : col)];
    }
  }
  return full;
}

[[nodiscard]] absl::StatusOr<std::vector<std::pair<std::string, LoweredTensorOp>>> LowerSplit(
    const Graph& graph, const GraphNode& node) {
  if (node.inputs.empty()) return NodeError(node, "has no input");
  TF_ASSIGN_OR_RETURN(TensorShape in, graph.ShapeOf(node.inputs[0], &node));
  if (in.dtype != kOnnxFloat) return NodeError(node, "only float32 tensors are supported");
  const int64_t rank = static_cast<int64_t>(in.dims.size());
  TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, IntAttribute(node, "axis", 0), rank));
  const std::vector<int64_t> strides = RowMajorStrides(in.dims);
  std::vector<std::pair<std::string, LoweredTensorOp>> parts;
  int64_t start = 0;
  for (const std::string& output : node.outputs) {
    if (output.empty()) continue;
    TF_ASSIGN_OR_RETURN(TensorShape out, graph.ShapeOf(output, &node));
    if (out.dims.size() != in.dims.size()) return NodeError(node, "output of another rank");
    LoweredTensorOp lowered;
    lowered.step.op = StepOp::kStridedCopy;
    lowered.step.node = node.name;
    lowered.step.out_shape = out.dims;
    lowered.step.a_strides = strides;
    lowered.step.a_offset = start * strides[axis];
    lowered.operands = {node.inputs[0]};
    start += out.dims[axis];
    if (start > in.dims[axis]) return NodeError(node, "outputs longer than the input");
    parts.push_back({output, std::move(lowered)});
  }
  return parts;
}

[[nodiscard]] absl::StatusOr<std::vector<int64_t>> ReduceAxes(const Graph& graph,
                                                              const GraphNode& node,
                                                              const std::vector<int64_t>& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = IntsAttribute(node, "axes", {});
  if (axes.empty()) {
    TF_ASSIGN_OR_RETURN(axes, IntsInput(graph, node, 1));
  }
  if (axes.empty()) {
    if (IntAttribute(node, "noop_with_empty_axes", 0) != 0) return axes;
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& a : axes) {
    TF_ASSIGN_OR_RETURN(a, AxisOf(node, a, rank));
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  // Axes of extent 1 between others reduce nothing: reduced axes must be
  // adjacent once those are passed over.
  for (size_t i = 1; i < axes.size(); ++i) {
    for (int64_t d = axes[i - 1] + 1; d < axes[i]; ++d) {
      if (in[d] != 1) {
        return NodeError(node, "reduction over axes that are not adjacent is not supported");
      }
    }
  }
  return axes;
}

[[nodiscard]] absl::StatusOr<LoweredTensorOp> LowerTensorOp(const Graph& graph,
                                                            const GraphNode& node,
                                                            TensorOpLowering lower) {
  if (node.inputs.empty() || node.outputs.empty()) return NodeError(node, "has no input/output");
  TF_ASSIGN_OR_RETURN(TensorShape in, graph.ShapeOf(node.inputs[0], &node));
  TF_ASSIGN_OR_RETURN(TensorShape out, graph.ShapeOf(node.outputs[0], &node));
  if (in.dtype != kOnnxFloat || out.dtype != kOnnxFloat) {
    return NodeError(node, "only float32 tensors are supported");
  }
  LoweredTensorOp lowered;
  lowered.step.node = node.name;
  lowered.step.out_shape = out.dims;
  lowered.operands = {node.inputs[0]};
  TF_RETURN_IF_ERROR(lower(graph, node, in, out, lowered));
  return lowered;
}

}  // namespace tunefleet
