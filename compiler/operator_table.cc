#include "compiler/operator_table.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "tuner_core/graph/canonicalize.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

OperatorInfo Pointwise(std::string op, PointwiseFunc func, std::vector<std::string> attributes = {},
                       std::string note = "") {
  return {std::move(op), OpLowering::kPointwise, nullptr,        func,
          true,          std::move(attributes),  std::move(note)};
}

OperatorInfo TensorOp(std::string op, TensorOpLowering lower,
                      std::vector<std::string> attributes = {}, std::string note = "") {
  return {std::move(op), OpLowering::kTensorOp, lower,          PointwiseFunc::kNone,
          false,         std::move(attributes), std::move(note)};
}

OperatorInfo Of(std::string op, OpLowering lowering, std::vector<std::string> attributes = {},
                std::string note = "") {
  return {std::move(op),         lowering,       nullptr, PointwiseFunc::kNone, false,
          std::move(attributes), std::move(note)};
}

std::vector<OperatorInfo> MakeTable() {
  const std::vector<std::string> pool = {"kernel_shape", "strides",  "pads",
                                         "ceil_mode",    "auto_pad", "dilations"};
  std::vector<std::string> avg_pool = pool;
  avg_pool.push_back("count_include_pad");
  std::vector<std::string> max_pool = pool;
  max_pool.push_back("storage_order");
  const std::vector<std::string> reduce = {"axes", "keepdims", "noop_with_empty_axes"};
  std::vector<OperatorInfo> table = {
      Of("Conv", OpLowering::kTunedKernel,
         {"kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"},
         "the shapes task extraction makes tasks of"),
      Of("Gemm", OpLowering::kTunedKernel, {"alpha", "beta", "transA", "transB"},
         "constant B, a bias row"),
      Of("MatMul", OpLowering::kTunedKernel, {}, "constant 2-D weights, or batched"),
      Of("MaxPool", OpLowering::kPool, max_pool, "1-D and 2-D"),
      Of("AveragePool", OpLowering::kPool, avg_pool, "1-D and 2-D"),
      Of("GlobalAveragePool", OpLowering::kPool),
      {"Add", OpLowering::kAdd, kLowerBinary, PointwiseFunc::kNone, true, {}, "broadcasting"},
      Pointwise("Relu", PointwiseFunc::kRelu),
      Pointwise("Clip", PointwiseFunc::kClip, {"min", "max"}, "constant min and max"),
      Pointwise("Sqrt", PointwiseFunc::kSqrt),
      Pointwise("Exp", PointwiseFunc::kExp),
      Pointwise("Erf", PointwiseFunc::kErf),
      Pointwise("Tanh", PointwiseFunc::kTanh),
      Pointwise("Sigmoid", PointwiseFunc::kSigmoid),
      Pointwise("Neg", PointwiseFunc::kNeg),
      Pointwise("HardSigmoid", PointwiseFunc::kHardSigmoid, {"alpha", "beta"}),
      Pointwise("HardSwish", PointwiseFunc::kHardSwish),
      Pointwise("LeakyRelu", PointwiseFunc::kLeakyRelu, {"alpha"}),
      Pointwise("Elu", PointwiseFunc::kElu, {"alpha"}),
      Pointwise("Abs", PointwiseFunc::kAbs),
      Pointwise("Floor", PointwiseFunc::kFloor),
      Pointwise("Ceil", PointwiseFunc::kCeil),
      Pointwise("Reciprocal", PointwiseFunc::kReciprocal),
      Pointwise("Gelu", PointwiseFunc::kGelu, {"approximate"}, "opset 20, and the Erf/Tanh forms"),
      TensorOp("Max", kLowerBinary, {}, "broadcasting, any number of inputs"),
      TensorOp("Min", kLowerBinary, {}, "broadcasting, any number of inputs"),
      {"Sum",
       OpLowering::kAdd,
       kLowerBinary,
       PointwiseFunc::kNone,
       true,
       {},
       "broadcasting, any number of inputs"},
      TensorOp("Mod", kLowerBinary, {"fmod"}, "broadcasting"),
      TensorOp("Expand", kLowerExpand, {}, "constant shape"),
      TensorOp("LayerNormalization", kLowerLayerNorm, {"axis", "epsilon", "stash_type"},
               "also fused from its opset-13 decomposition"),
      TensorOp("InstanceNormalization", kLowerInstanceNorm, {"epsilon"}),
      Of("ConvTranspose", OpLowering::kTunedKernel,
         {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape",
          "pads", "strides"},
         "2-D: a tuned Conv of its input spread by the strides (at model load)"),
      Of("Einsum", OpLowering::kTunedKernel, {"equation"},
         "a batched MatMul (one contracted index) or a permutation (at model load)"),
      TensorOp(kDilateOp, kLowerDilate, {"strides", "pads"}, "ConvTranspose's spread input"),
      TensorOp("Resize", kLowerResize,
               {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                "exclude_outside", "extrapolation_value", "antialias", "axes",
                "keep_aspect_ratio_policy"},
               "nearest, linear and cubic; constant scales or sizes"),
      Pointwise(kSiluOp, PointwiseFunc::kSilu, {}, "fused from x * Sigmoid(x)"),
      TensorOp(kSelectOp, kLowerBinary, {}, "Where's select step"),
      Of("Where", OpLowering::kConstant, {},
         "folded at compile time, or with a constant condition and one constant side"),
      TensorOp("Sub", kLowerBinary, {}, "broadcasting"),
      TensorOp("Mul", kLowerBinary, {}, "broadcasting"),
      TensorOp("Div", kLowerBinary, {}, "broadcasting"),
      TensorOp("Pow", kLowerBinary, {}, "broadcasting"),
      TensorOp("PRelu", kLowerBinary, {}, "slope broadcasting"),
      TensorOp("Transpose", kLowerTranspose, {"perm"}),
      TensorOp("Slice", kLowerSlice, {}, "constant starts, ends, axes and steps"),
      TensorOp("Concat", kLowerConcat, {"axis"}),
      TensorOp("Softmax", kLowerSoftmax, {"axis"}),
      TensorOp("ReduceMean", kLowerReduce, reduce, "adjacent axes"),
      TensorOp("ReduceSum", kLowerReduce, reduce, "adjacent axes"),
      TensorOp("ReduceMax", kLowerReduce, reduce, "adjacent axes"),
      TensorOp("ReduceMin", kLowerReduce, reduce, "adjacent axes"),
      TensorOp("ReduceL2", kLowerReduce, reduce,
               "a ReduceSum of squares, then Sqrt (at model load)"),
      TensorOp("ReduceSumSquare", kLowerReduce, reduce, "a ReduceSum of squares (at model load)"),
      TensorOp("ReduceL1", kLowerReduce, reduce, "a ReduceSum of absolute values (at model load)"),
      TensorOp("Gather", kLowerGather, {"axis"}, "constant indices"),
      Of("Split", OpLowering::kSplit, {"axis", "split", "num_outputs"}),
      TensorOp("BatchNormalization", kLowerBatchNorm, {"epsilon", "momentum", "training_mode"},
               "folded into a preceding Conv, else inference form"),
      TensorOp("Pad", kLowerPad, {"mode", "pads", "value"}, "constant, reflect, edge"),
      Of("Flatten", OpLowering::kAlias, {"axis"}),
      Of("Reshape", OpLowering::kAlias, {"allowzero"}),
      Of("Identity", OpLowering::kAlias),
      Of("Dropout", OpLowering::kAlias, {"ratio", "seed"}, "inference: identity"),
      Of("Squeeze", OpLowering::kAlias, {"axes"}),
      Of("Unsqueeze", OpLowering::kAlias, {"axes"}),
      Of("Cast", OpLowering::kAlias, {"to", "saturate"}, "float32 to float32"),
  };
  // Shape arithmetic and masks: folded away when their inputs are constants.
  for (const char* op : {"Constant", "Shape", "ConstantOfShape", "Range", "Equal", "Less",
                         "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Not"}) {
    table.push_back(Of(op, OpLowering::kConstant,
                       {"value", "start", "end", "to", "fmod", "value_float", "value_floats",
                        "value_int", "value_ints"},
                       "folded at compile time: constant inputs only"));
  }
  return table;
}

// The float of scalar constant input `i` of `node`, or `fallback` when the
// input is omitted.
[[nodiscard]] absl::StatusOr<float> ScalarInput(const Graph& graph, const GraphNode& node, size_t i,
                                                float fallback) {
  if (i >= node.inputs.size() || node.inputs[i].empty()) return fallback;
  auto it = graph.constants.find(node.inputs[i]);
  if (it == graph.constants.end() || it->second.shape.dtype != kOnnxFloat ||
      it->second.f32.size() != 1) {
    return NodeError(node,
                     absl::StrCat("input '", node.inputs[i], "' is not a float32 scalar constant"));
  }
  return it->second.f32[0];
}

}  // namespace

const std::vector<OperatorInfo>& OperatorTable() {
  static const std::vector<OperatorInfo>* table = new std::vector<OperatorInfo>(MakeTable());
  return *table;
}

const OperatorInfo* FindOperator(const std::string& op_type) {
  for (const OperatorInfo& info : OperatorTable()) {
    if (info.op_type == op_type) return &info;
  }
  return nullptr;
}

[[nodiscard]] absl::Status CheckAttributes(const GraphNode& node, const OperatorInfo& info) {
  for (const auto& [name, value] : node.attributes.items()) {
    bool known = false;
    for (const std::string& supported : info.attributes) known |= supported == name;
    if (!known) {
      return NodeError(
          node,
          absl::StrCat(
              "attribute '", name, "' is not supported (", info.op_type, " supports ",
              info.attributes.empty() ? std::string("none") : absl::StrJoin(info.attributes, ", "),
              ")"));
    }
  }
  return absl::OkStatus();
}

[[nodiscard]] absl::Status UnsupportedOperatorError(const GraphNode& node) {
  return NodeError(node, absl::StrCat("operator '", node.op_type,
                                      "' is not supported by tunefleet compile (supported: ",
                                      SupportedOperatorList(), ")"));
}

std::string SupportedOperatorList() {
  std::vector<std::string> names;
  for (const OperatorInfo& info : OperatorTable()) {
    names.push_back(info.note.empty() ? info.op_type
                                      : absl::StrCat(info.op_type, " (", info.note, ")"));
  }
  return absl::StrJoin(names, ", ");
}

[[nodiscard]] absl::StatusOr<Activation> ActivationOf(const Graph& graph, const GraphNode& node,
                                                      const OperatorInfo& info) {
  Activation a;
  a.func = info.func;
  switch (info.func) {
    case PointwiseFunc::kClip: {
      a.alpha = node.attributes.value("min", -INFINITY);
      a.beta = node.attributes.value("max", INFINITY);
      TF_ASSIGN_OR_RETURN(a.alpha, ScalarInput(graph, node, 1, a.alpha));
      TF_ASSIGN_OR_RETURN(a.beta, ScalarInput(graph, node, 2, a.beta));
      break;
    }
    case PointwiseFunc::kHardSigmoid:  // ONNX's defaults; PyTorch exports alpha 1/6
      a.alpha = node.attributes.value("alpha", 0.2f);
      a.beta = node.attributes.value("beta", 0.5f);
      break;
    case PointwiseFunc::kHardSwish:  // x * HardSigmoid(x) with alpha 1/6, beta 1/2
      a.alpha = 1.0f / 6.0f;
      a.beta = 0.5f;
      break;
    case PointwiseFunc::kLeakyRelu:
      a.alpha = node.attributes.value("alpha", 0.01f);
      break;
    case PointwiseFunc::kElu:
      a.alpha = node.attributes.value("alpha", 1.0f);
      break;
    case PointwiseFunc::kGelu:
      if (StringAttribute(node, "approximate", "none") == "tanh") a.func = PointwiseFunc::kGeluTanh;
      break;
    default:
      break;
  }
  return a;
}

}  // namespace tunefleet
