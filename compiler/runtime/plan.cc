#include "compiler/runtime/plan.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

constexpr std::pair<StepOp, const char*> kStepOpNames[] = {
    {StepOp::kKernel, "kernel"},
    {StepOp::kRelayout, "relayout"},
    {StepOp::kCopy, "copy"},
    {StepOp::kMaxPool, "max_pool"},
    {StepOp::kAvgPool, "avg_pool"},
    {StepOp::kGlobalAvgPool, "global_avg_pool"},
    {StepOp::kAdd, "add"},
    {StepOp::kPointwise, "pointwise"},
    {StepOp::kSoftmax, "softmax"},
    {StepOp::kStridedCopy, "strided_copy"},
    {StepOp::kBroadcast, "broadcast"},
    {StepOp::kReduce, "reduce"},
    {StepOp::kConcat, "concat"},
    {StepOp::kBatchNorm, "batch_norm"},
    {StepOp::kPad, "pad"},
    {StepOp::kGather, "gather"},
    {StepOp::kLayerNorm, "layer_norm"},
    {StepOp::kResize, "resize"},
    {StepOp::kChannelBinary, "channel_binary"},
    {StepOp::kChannelGather, "channel_gather"},
    {StepOp::kScaleWeights, "scale_weights"},
};

constexpr std::pair<PointwiseFunc, const char*> kPointwiseNames[] = {
    {PointwiseFunc::kNone, "none"},
    {PointwiseFunc::kRelu, "relu"},
    {PointwiseFunc::kClip, "clip"},
    {PointwiseFunc::kSqrt, "sqrt"},
    {PointwiseFunc::kExp, "exp"},
    {PointwiseFunc::kErf, "erf"},
    {PointwiseFunc::kTanh, "tanh"},
    {PointwiseFunc::kSigmoid, "sigmoid"},
    {PointwiseFunc::kNeg, "neg"},
    {PointwiseFunc::kHardSigmoid, "hardsigmoid"},
    {PointwiseFunc::kHardSwish, "hardswish"},
    {PointwiseFunc::kLeakyRelu, "leaky_relu"},
    {PointwiseFunc::kElu, "elu"},
    {PointwiseFunc::kAbs, "abs"},
    {PointwiseFunc::kFloor, "floor"},
    {PointwiseFunc::kCeil, "ceil"},
    {PointwiseFunc::kReciprocal, "reciprocal"},
    {PointwiseFunc::kGelu, "gelu"},
    {PointwiseFunc::kGeluTanh, "gelu_tanh"},
    {PointwiseFunc::kSilu, "silu"},
};

constexpr std::pair<BinaryFunc, const char*> kBinaryNames[] = {
    {BinaryFunc::kAdd, "add"},       {BinaryFunc::kSub, "sub"},
    {BinaryFunc::kMul, "mul"},       {BinaryFunc::kDiv, "div"},
    {BinaryFunc::kPow, "pow"},       {BinaryFunc::kPrelu, "prelu"},
    {BinaryFunc::kMax, "max"},       {BinaryFunc::kMin, "min"},
    {BinaryFunc::kMod, "mod"},       {BinaryFunc::kFloorMod, "floor_mod"},
    {BinaryFunc::kSelect, "select"},
};

constexpr std::pair<ReduceFunc, const char*> kReduceNames[] = {
    {ReduceFunc::kMean, "mean"},
    {ReduceFunc::kSum, "sum"},
    {ReduceFunc::kMax, "max"},
    {ReduceFunc::kMin, "min"},
};

constexpr std::pair<PadMode, const char*> kPadModeNames[] = {
    {PadMode::kConstant, "constant"},
    {PadMode::kReflect, "reflect"},
    {PadMode::kEdge, "edge"},
};

constexpr std::pair<ElementType, const char*> kElementTypeNames[] = {
    {ElementType::kFloat32, "float32"},
    {ElementType::kInt32, "int32"},
    {ElementType::kInt64, "int64"},
};

template <typename Enum, size_t N>
const char* NameOf(const std::pair<Enum, const char*> (&names)[N], Enum value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "?";
}

template <typename Enum, size_t N>
[[nodiscard]] absl::StatusOr<Enum> Parse(const std::pair<Enum, const char*> (&names)[N],
                                         const std::string& name, const char* what) {
  for (const auto& [v, n] : names) {
    if (name == n) return v;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("model plan: unknown ", what, " '", name, "' (a newer compiler's plan?)"));
}

// JSON has no infinities (nlohmann writes them as null): they travel as
// the strings "inf" / "-inf" (a Clip with no max, say).
nlohmann::json FloatJson(float v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
float FloatFrom(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    throw nlohmann::json::type_error::create(302, "a float or \"inf\"/\"-inf\", got " + s, &j);
  }
  return j.get<float>();
}

nlohmann::json ActivationJson(const Activation& a) {
  return {{"func", PointwiseFuncName(a.func)},
          {"alpha", FloatJson(a.alpha)},
          {"beta", FloatJson(a.beta)}};
}
[[nodiscard]] absl::StatusOr<Activation> ActivationFrom(const nlohmann::json& j) {
  Activation a;
  auto func = ParsePointwiseFunc(j.at("func").get<std::string>());
  if (!func.ok()) return func.status();
  a.func = *func;
  a.alpha = FloatFrom(j.at("alpha"));
  a.beta = FloatFrom(j.at("beta"));
  return a;
}

nlohmann::json TensorJson(const PlanTensor& t) {
  return {{"name", t.name},
          {"buffer", t.buffer},
          {"shape", t.shape},
          {"type", ElementTypeName(t.type)}};
}

[[nodiscard]] absl::StatusOr<PlanTensor> TensorFrom(const nlohmann::json& j) {
  PlanTensor t{j.at("name").get<std::string>(), j.at("buffer").get<int>(),
               j.at("shape").get<std::vector<int64_t>>()};
  // Plans from before integer inputs have no type: float32.
  TF_ASSIGN_OR_RETURN(t.type, Parse(kElementTypeNames, j.value("type", "float32"), "element type"));
  return t;
}

}  // namespace

const char* ElementTypeName(ElementType type) { return NameOf(kElementTypeNames, type); }

const char* StepOpName(StepOp op) { return NameOf(kStepOpNames, op); }

namespace {

// A resize step's tables: the same number of taps per output position of
// each axis, an index and a weight each, every index inside its axis (or
// -1: outside a crop).
[[nodiscard]] absl::Status CheckResize(const PlanStep& step) {
  int64_t positions = 0;
  for (int64_t d : step.out_shape) positions += d;
  const int64_t n = static_cast<int64_t>(step.indices.size());
  const int64_t taps = positions > 0 ? n / positions : 0;
  bool ok = step.in_shape.size() == step.out_shape.size() && taps > 0 && taps * positions == n &&
            step.weights.size() == step.indices.size();
  for (size_t d = 0, t = 0; ok && d < step.out_shape.size(); ++d) {
    for (int64_t k = 0; ok && k < step.out_shape[d] * taps; ++k, ++t) {
      ok = step.indices[t] >= -1 && step.indices[t] < step.in_shape[d];
    }
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("model plan: step '", step.node, "' resizes out of range"));
  }
  return absl::OkStatus();
}

}  // namespace
[[nodiscard]] absl::StatusOr<StepOp> ParseStepOp(const std::string& name) {
  return Parse(kStepOpNames, name, "step op");
}
const char* PointwiseFuncName(PointwiseFunc func) { return NameOf(kPointwiseNames, func); }
[[nodiscard]] absl::StatusOr<PointwiseFunc> ParsePointwiseFunc(const std::string& name) {
  return Parse(kPointwiseNames, name, "pointwise function");
}
const char* BinaryFuncName(BinaryFunc func) { return NameOf(kBinaryNames, func); }
[[nodiscard]] absl::StatusOr<BinaryFunc> ParseBinaryFunc(const std::string& name) {
  return Parse(kBinaryNames, name, "binary function");
}
const char* ReduceFuncName(ReduceFunc func) { return NameOf(kReduceNames, func); }
[[nodiscard]] absl::StatusOr<ReduceFunc> ParseReduceFunc(const std::string& name) {
  return Parse(kReduceNames, name, "reduction");
}
const char* PadModeName(PadMode mode) { return NameOf(kPadModeNames, mode); }
[[nodiscard]] absl::StatusOr<PadMode> ParsePadMode(const std::string& name) {
  return Parse(kPadModeNames, name, "pad mode");
}

namespace {

// Each alias lies inside an activation that is no alias itself.
[[nodiscard]] absl::Status CheckAliases(const std::vector<PlanBuffer>& buffers) {
  for (const PlanBuffer& b : buffers) {
    if (b.alias_of < 0) continue;
    const bool ok = !b.is_constant() && b.alias_of < static_cast<int>(buffers.size()) &&
                    b.alias_offset >= 0 && buffers[b.alias_of].alias_of < 0 &&
                    !buffers[b.alias_of].is_constant() &&
                    b.alias_offset + b.elements <= buffers[b.alias_of].elements;
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model plan: buffer '", b.tensor, "' is an alias outside any activation buffer"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

nlohmann::json ModelPlan::ToJson() const {
  nlohmann::json j;
  j["version"] = version;
  j["target"] = target;
  j["triple"] = triple;
  j["required_features"] = required_features;
  j["weight_floats"] = weight_floats;
  j["inputs"] = nlohmann::json::array();
  j["outputs"] = nlohmann::json::array();
  for (const PlanTensor& t : inputs) j["inputs"].push_back(TensorJson(t));
  for (const PlanTensor& t : outputs) j["outputs"].push_back(TensorJson(t));
  j["buffers"] = nlohmann::json::array();
  for (const PlanBuffer& b : buffers) {
    j["buffers"].push_back({{"tensor", b.tensor},
                            {"elements", b.elements},
                            {"constant_offset", b.constant_offset},
                            {"shape", b.shape},
                            {"block", b.block},
                            {"row_width", b.row_width},
                            {"alias_of", b.alias_of},
                            {"alias_offset", b.alias_offset}});
  }
  j["steps"] = nlohmann::json::array();
  for (const PlanStep& s : steps) {
    const PlanEpilogue& e = s.epilogue;
    j["steps"].push_back({{"op", StepOpName(s.op)},
                          {"node", s.node},
                          {"symbol", s.symbol},
                          {"inputs", s.inputs},
                          {"outputs", s.outputs},
                          {"staged", s.staged},
                          {"in_shape", s.in_shape},
                          {"out_shape", s.out_shape},
                          {"kernel_shape", s.kernel_shape},
                          {"strides", s.strides},
                          {"pads", s.pads},
                          {"count_include_pad", s.count_include_pad},
                          {"activation", ActivationJson(s.activation)},
                          {"binary", BinaryFuncName(s.binary)},
                          {"reduce", ReduceFuncName(s.reduce)},
                          {"pad_mode", PadModeName(s.pad_mode)},
                          {"dilations", s.dilations},
                          {"alpha", FloatJson(s.alpha)},
                          {"a_strides", s.a_strides},
                          {"b_strides", s.b_strides},
                          {"a_offset", s.a_offset},
                          {"indices", s.indices},
                          {"weights", s.weights},
                          {"epilogue",
                           {{"bias", e.bias},
                            {"residual", e.residual},
                            {"activation", ActivationJson(e.activation)},
                            {"channels", e.channels},
                            {"inner", e.inner},
                            {"block", e.block},
                            {"in_kernel", e.in_kernel},
                            {"in_stores", e.in_stores}}}});
  }
  return j;
}

[[nodiscard]] absl::StatusOr<ModelPlan> ModelPlan::FromJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("model plan: not JSON");
  try {
    ModelPlan plan;
    plan.version = j.at("version").get<int>();
    if (plan.version != kPlanVersion) {
      return absl::InvalidArgumentError(absl::StrCat("model plan version ", plan.version,
                                                     ", this runtime reads version ", kPlanVersion,
                                                     ": recompile the model"));
    }
    plan.target = j.at("target").get<std::string>();
    plan.triple = j.at("triple").get<std::string>();
    plan.required_features = j.at("required_features").get<std::vector<std::string>>();
    plan.weight_floats = j.at("weight_floats").get<int64_t>();
    for (const auto& t : j.at("inputs")) {
      TF_ASSIGN_OR_RETURN(PlanTensor tensor, TensorFrom(t));
      plan.inputs.push_back(std::move(tensor));
    }
    for (const auto& t : j.at("outputs")) {
      TF_ASSIGN_OR_RETURN(PlanTensor tensor, TensorFrom(t));
      if (tensor.type != ElementType::kFloat32) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: output '", tensor.name, "' is not float32"));
      }
      plan.outputs.push_back(std::move(tensor));
    }
    for (const auto& b : j.at("buffers")) {
      PlanBuffer buffer{b.at("tensor").get<std::string>(), b.at("elements").get<int64_t>(),
                        b.at("constant_offset").get<int64_t>()};
      buffer.shape = b.at("shape").get<std::vector<int64_t>>();
      buffer.block = b.at("block").get<int64_t>();
      buffer.row_width = b.at("row_width").get<int64_t>();
      buffer.alias_of = b.at("alias_of").get<int>();
      buffer.alias_offset = b.at("alias_offset").get<int64_t>();
      if (buffer.block < 1 || buffer.row_width < 0 ||
          (buffer.is_4d() && (buffer.shape[1] % buffer.block != 0 ||
                              buffer.elements < buffer.shape[0] * buffer.shape[1] *
                                                    buffer.shape[2] * buffer.RowWidth()))) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: buffer '", buffer.tensor, "' has an impossible layout"));
      }
      plan.buffers.push_back(std::move(buffer));
    }
    TF_RETURN_IF_ERROR(CheckAliases(plan.buffers));
    for (const auto& s : j.at("steps")) {
      PlanStep step;
      TF_ASSIGN_OR_RETURN(step.op, ParseStepOp(s.at("op").get<std::string>()));
      step.node = s.at("node").get<std::string>();
      step.symbol = s.at("symbol").get<std::string>();
      step.inputs = s.at("inputs").get<std::vector<int>>();
      step.outputs = s.at("outputs").get<std::vector<int>>();
      step.staged = s.at("staged").get<std::vector<int>>();
      step.in_shape = s.at("in_shape").get<std::vector<int64_t>>();
      step.out_shape = s.at("out_shape").get<std::vector<int64_t>>();
      step.kernel_shape = s.at("kernel_shape").get<std::vector<int64_t>>();
      step.strides = s.at("strides").get<std::vector<int64_t>>();
      step.pads = s.at("pads").get<std::vector<int64_t>>();
      step.count_include_pad = s.at("count_include_pad").get<bool>();
      TF_ASSIGN_OR_RETURN(step.activation, ActivationFrom(s.at("activation")));
      TF_ASSIGN_OR_RETURN(step.binary, ParseBinaryFunc(s.at("binary").get<std::string>()));
      TF_ASSIGN_OR_RETURN(step.reduce, ParseReduceFunc(s.at("reduce").get<std::string>()));
      TF_ASSIGN_OR_RETURN(step.pad_mode, ParsePadMode(s.at("pad_mode").get<std::string>()));
      step.dilations = s.at("dilations").get<std::vector<int64_t>>();
      step.alpha = FloatFrom(s.at("alpha"));
      step.a_strides = s.at("a_strides").get<std::vector<int64_t>>();
      step.b_strides = s.at("b_strides").get<std::vector<int64_t>>();
      step.a_offset = s.at("a_offset").get<int64_t>();
      step.indices = s.at("indices").get<std::vector<int64_t>>();
      step.weights = s.value("weights", std::vector<float>());
      if (step.op == StepOp::kResize) TF_RETURN_IF_ERROR(CheckResize(step));
      if (step.op == StepOp::kChannelGather) {
        bool ok = step.in_shape.size() == 4 && step.out_shape.size() == 4 &&
                  step.inputs.size() == 1 && step.outputs.size() == 1 &&
                  static_cast<int64_t>(step.indices.size()) == step.out_shape[1];
        for (int64_t i : step.indices) ok = ok && i >= 0 && i < step.in_shape[1];
        if (!ok) {
          return absl::InvalidArgumentError(absl::StrCat(
              "model plan: step '", step.node, "' is not a channel gather within its input"));
        }
      }
      if (step.op == StepOp::kGather) {
        // Indices are the step's own, or (a second input) read at run time,
        // when the runtime checks them.
        if (step.in_shape.size() != 3 || step.inputs.empty() || step.inputs.size() > 2) {
          return absl::InvalidArgumentError(
              absl::StrCat("model plan: step '", step.node, "' is not a gather"));
        }
        for (int64_t i : step.indices) {
          if (i < 0 || i >= step.in_shape[1]) {
            return absl::InvalidArgumentError(
                absl::StrCat("model plan: step '", step.node, "' gathers out of range"));
          }
        }
      }
      if (step.op == StepOp::kPad &&
          (step.pads.size() != 2 * step.in_shape.size() ||
           step.in_shape.size() != step.out_shape.size() ||
           (!step.strides.empty() && (step.strides.size() != step.in_shape.size() ||
                                      step.pad_mode != PadMode::kConstant)))) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: step '", step.node, "' has pads not of its rank"));
      }
      if ((!step.a_strides.empty() && step.a_strides.size() != step.out_shape.size()) ||
          (!step.b_strides.empty() && step.b_strides.size() != step.out_shape.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: step '", step.node, "' has strides not of its rank"));
      }
      const auto& e = s.at("epilogue");
      step.epilogue.bias = e.at("bias").get<int>();
      step.epilogue.residual = e.at("residual").get<int>();
      TF_ASSIGN_OR_RETURN(step.epilogue.activation, ActivationFrom(e.at("activation")));
      step.epilogue.channels = e.at("channels").get<int64_t>();
      step.epilogue.inner = e.at("inner").get<int64_t>();
      step.epilogue.block = e.at("block").get<int64_t>();
      step.epilogue.in_kernel = e.value("in_kernel", false);
      step.epilogue.in_stores = e.value("in_stores", false);
      if (step.epilogue.block < 1 || step.epilogue.inner < 1 ||
          step.epilogue.channels % step.epilogue.block != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: step '", step.node, "' has an impossible epilogue"));
      }
      plan.steps.push_back(std::move(step));
    }
    const int num_buffers = static_cast<int>(plan.buffers.size());
    for (const PlanStep& step : plan.steps) {
      for (int id : {step.epilogue.bias, step.epilogue.residual}) {
        if (id >= num_buffers) {
          return absl::InvalidArgumentError(
              absl::StrCat("model plan: step '", step.node, "' names buffer ", id));
        }
      }
      for (const std::vector<int>* ids : {&step.inputs, &step.outputs, &step.staged}) {
        for (int id : *ids) {
          if (id < 0 || id >= num_buffers) {
            return absl::InvalidArgumentError(
                absl::StrCat("model plan: step '", step.node, "' names buffer ", id));
          }
        }
      }
    }
    return plan;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("model plan: ", e.what()));
  }
}

}  // namespace tunefleet
