#include "compiler/runtime/plan.h"

#include "absl/strings/str_cat.h"

namespace tunefleet {
namespace {

nlohmann::json TensorJson(const PlanTensor& t) {
  return {{"name", t.name}, {"buffer", t.buffer}, {"shape", t.shape}};
}

PlanTensor TensorFrom(const nlohmann::json& j) {
  return {j.at("name").get<std::string>(), j.at("buffer").get<int>(),
          j.at("shape").get<std::vector<int64_t>>()};
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
                            {"row_width", b.row_width}});
  }
  j["steps"] = nlohmann::json::array();
  for (const PlanStep& s : steps) {
    const PlanEpilogue& e = s.epilogue;
    j["steps"].push_back({{"op", s.op},
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
                          {"clip_min", s.clip_min},
                          {"clip_max", s.clip_max},
                          {"func", s.func},
                          {"alpha", s.alpha},
                          {"beta", s.beta},
                          {"a_strides", s.a_strides},
                          {"b_strides", s.b_strides},
                          {"a_offset", s.a_offset},
                          {"epilogue",
                           {{"bias", e.bias},
                            {"residual", e.residual},
                            {"activation", e.activation},
                            {"clip_min", e.clip_min},
                            {"clip_max", e.clip_max},
                            {"channels", e.channels},
                            {"inner", e.inner},
                            {"block", e.block}}}});
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
    for (const auto& t : j.at("inputs")) plan.inputs.push_back(TensorFrom(t));
    for (const auto& t : j.at("outputs")) plan.outputs.push_back(TensorFrom(t));
    for (const auto& b : j.at("buffers")) {
      PlanBuffer buffer{b.at("tensor").get<std::string>(), b.at("elements").get<int64_t>(),
                        b.at("constant_offset").get<int64_t>()};
      buffer.shape = b.at("shape").get<std::vector<int64_t>>();
      buffer.block = b.at("block").get<int64_t>();
      buffer.row_width = b.at("row_width").get<int64_t>();
      if (buffer.block < 1 || buffer.row_width < 0 ||
          (buffer.is_4d() && (buffer.shape[1] % buffer.block != 0 ||
                              buffer.elements < buffer.shape[0] * buffer.shape[1] *
                                                    buffer.shape[2] * buffer.RowWidth()))) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: buffer '", buffer.tensor, "' has an impossible layout"));
      }
      plan.buffers.push_back(std::move(buffer));
    }
    for (const auto& s : j.at("steps")) {
      PlanStep step;
      step.op = s.at("op").get<std::string>();
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
      step.clip_min = s.at("clip_min").get<float>();
      step.clip_max = s.at("clip_max").get<float>();
      step.func = s.value("func", std::string());
      step.alpha = s.value("alpha", 0.0f);
      step.beta = s.value("beta", 0.0f);
      step.a_strides = s.value("a_strides", std::vector<int64_t>());
      step.b_strides = s.value("b_strides", std::vector<int64_t>());
      step.a_offset = s.value("a_offset", int64_t{0});
      if ((!step.a_strides.empty() && step.a_strides.size() != step.out_shape.size()) ||
          (!step.b_strides.empty() && step.b_strides.size() != step.out_shape.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("model plan: step '", step.node, "' has strides not of its rank"));
      }
      const auto& e = s.at("epilogue");
      step.epilogue.bias = e.at("bias").get<int>();
      step.epilogue.residual = e.at("residual").get<int>();
      step.epilogue.activation = e.at("activation").get<std::string>();
      step.epilogue.clip_min = e.at("clip_min").get<float>();
      step.epilogue.clip_max = e.at("clip_max").get<float>();
      step.epilogue.channels = e.at("channels").get<int64_t>();
      step.epilogue.inner = e.at("inner").get<int64_t>();
      step.epilogue.block = e.at("block").get<int64_t>();
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
