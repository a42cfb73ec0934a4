#include "compiler/plan_builder.h"

#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

// Floats between constants, so each starts 64-byte aligned in the blob.
constexpr int64_t kConstantAlignFloats = 16;

[[nodiscard]] absl::Status NodeError(const GraphNode& node, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name, "' (", node.op_type, "): ", what));
}

class PlanBuilder {
 public:
  PlanBuilder(const Graph& graph, const std::vector<ModelLayer>& layers,
              const ChooseKernelFn& choose)
      : graph_(graph), choose_(choose) {
    for (const ModelLayer& layer : layers) layers_[layer.name] = &layer;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const std::string& input : graph.nodes[i].inputs) consumers_[input].push_back(i);
    }
    graph_outputs_.insert(graph.outputs.begin(), graph.outputs.end());
  }

  [[nodiscard]] absl::StatusOr<BuiltPlan> Build() {
    for (const std::string& input : graph_.inputs) {
      TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(input));
      const int id = NewBuffer(input, shape.NumElements());
      built_.plan.inputs.push_back({input, id, shape.dims});
    }
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (consumed_.count(i)) continue;
      TF_RETURN_IF_ERROR(AddNode(i));
    }
    for (const std::string& output : graph_.outputs) {
      TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(output));
      auto it = tensors_.find(output);
      if (it == tensors_.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph output '", output, "' is computed by no supported node"));
      }
      built_.plan.outputs.push_back({output, it->second, shape.dims});
    }
    built_.plan.weight_floats = static_cast<int64_t>(built_.weights.size());
    return std::move(built_);
  }

 private:
  int NewBuffer(const std::string& tensor, int64_t elements, int64_t offset = -1) {
    built_.plan.buffers.push_back({tensor, elements, offset});
    const int id = static_cast<int>(built_.plan.buffers.size()) - 1;
    tensors_[tensor] = id;
    return id;
  }

  int AddConstant(const std::string& name, const std::vector<float>& values) {
    while (built_.weights.size() % kConstantAlignFloats != 0) built_.weights.push_back(0);
    const int64_t offset = static_cast<int64_t>(built_.weights.size());
    built_.weights.insert(built_.weights.end(), values.begin(), values.end());
    built_.plan.buffers.push_back({name, static_cast<int64_t>(values.size()), offset});
    return static_cast<int>(built_.plan.buffers.size()) - 1;
  }

  [[nodiscard]] absl::StatusOr<std::vector<float>> Constant(const GraphNode& node, size_t input,
                                                            const std::string& what) {
    if (input >= node.inputs.size() || node.inputs[input].empty()) {
      return NodeError(node, absl::StrCat("has no ", what));
    }
    auto it = graph_.constants.find(ResolveConstant(node.inputs[input]));
    if (it == graph_.constants.end() || it->second.shape.dtype != kOnnxFloat) {
      return NodeError(node, absl::StrCat(what, " '", node.inputs[input],
                                          "' is not a float32 constant (initializer)"));
    }
    return it->second.f32;
  }

  // The initializer `tensor` names, through Identity-like nodes.
  std::string ResolveConstant(const std::string& tensor) const {
    auto it = constant_alias_.find(tensor);
    return it == constant_alias_.end() ? tensor : it->second;
  }
  bool IsConstant(const std::string& tensor) const {
    return graph_.IsConstant(ResolveConstant(tensor));
  }

  [[nodiscard]] absl::StatusOr<int> Input(const GraphNode& node, size_t i) {
    if (i >= node.inputs.size()) return NodeError(node, absl::StrCat("has no input ", i));
    auto it = tensors_.find(node.inputs[i]);
    if (it == tensors_.end()) {
      return NodeError(node,
                       absl::StrCat("input '", node.inputs[i], "' is not computed before it"));
    }
    return it->second;
  }

  [[nodiscard]] absl::StatusOr<int> Output(const GraphNode& node, const std::string& tensor) {
    TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(tensor, &node));
    return NewBuffer(tensor, shape.NumElements());
  }

  // The node that alone reads `tensor` (not a graph output), or -1.
  int SoleConsumer(const std::string& tensor) const {
    if (graph_outputs_.count(tensor)) return -1;
    auto it = consumers_.find(tensor);
    if (it == consumers_.end() || it->second.size() != 1) return -1;
    return static_cast<int>(it->second[0]);
  }

  [[nodiscard]] absl::StatusOr<std::pair<float, float>> ClipBounds(const GraphNode& node) {
    float lo = -INFINITY, hi = INFINITY;
    if (node.attributes.contains("min")) lo = node.attributes["min"].get<float>();
    if (node.attributes.contains("max")) hi = node.attributes["max"].get<float>();
    for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
      if (node.inputs[i].empty()) continue;
      TF_ASSIGN_OR_RETURN(std::vector<float> v, Constant(node, i, i == 1 ? "min" : "max"));
      if (v.size() != 1) return NodeError(node, "min/max are not scalars");
      (i == 1 ? lo : hi) = v[0];
    }
    return std::make_pair(lo, hi);
  }

  // Folds what follows a kernel's output into its epilogue; returns the
  // tensor the kernel's output buffer finally holds.
  [[nodiscard]] absl::StatusOr<std::string> FuseEpilogue(std::string out, PlanEpilogue* e,
                                                         const std::string& node_name) {
    for (;;) {
      const int next = SoleConsumer(out);
      if (next < 0) return out;
      const GraphNode& node = graph_.nodes[next];
      if (node.op_type == "Add" && e->residual < 0 && e->activation == "none" &&
          node.inputs.size() == 2) {
        const std::string& other = node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
        auto it = tensors_.find(other);
        TF_ASSIGN_OR_RETURN(TensorShape a, graph_.ShapeOf(out, &node));
        absl::StatusOr<TensorShape> b = graph_.ShapeOf(other, &node);
        if (it == tensors_.end() || !b.ok() || a.dims != b->dims) return out;
        e->residual = it->second;
      } else if (node.op_type == "Relu" && e->activation == "none") {
        e->activation = "relu";
      } else if (node.op_type == "Clip" && e->activation == "none") {
        TF_ASSIGN_OR_RETURN(auto bounds, ClipBounds(node));
        e->activation = "clip";
        e->clip_min = bounds.first;
        e->clip_max = bounds.second;
      } else {
        return out;
      }
      consumed_.insert(next);
      out = node.outputs[0];
      (void)node_name;
    }
  }

  [[nodiscard]] absl::Status AddKernelStep(const GraphNode& node, const ModelLayer& layer,
                                           int input, int weights, std::vector<float> bias,
                                           std::string out, int64_t channels, int64_t inner) {
    TF_ASSIGN_OR_RETURN(KernelChoice choice, choose_(layer));
    const std::string key = absl::StrCat(choice.task->name(), "|", layer.workload, "|",
                                         layer.args.dump(), "|", choice.config.ToJson().dump());
    auto [it, inserted] = kernel_by_key_.try_emplace(key, built_.kernels.size());
    if (inserted) {
      const std::string symbol = absl::StrCat("tf_kernel_", built_.kernels.size());
      built_.kernels.push_back({symbol, std::move(choice), {}});
    }
    KernelToBuild& kernel = built_.kernels[it->second];
    kernel.nodes.push_back(node.name);
    PlanStep step;
    step.op = "kernel";
    step.node = node.name;
    step.symbol = kernel.symbol;
    step.inputs = {input, weights};
    step.epilogue.channels = channels;
    step.epilogue.inner = inner;
    if (!bias.empty()) step.epilogue.bias = AddConstant(node.name + ".bias", bias);
    TF_ASSIGN_OR_RETURN(out, FuseEpilogue(out, &step.epilogue, node.name));
    TF_ASSIGN_OR_RETURN(int output, Output(node, out));
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status AddConv(const GraphNode& node, const ModelLayer& layer) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(std::vector<float> w, Constant(node, 1, "weight"));
    TF_ASSIGN_OR_RETURN(TensorShape ws, graph_.ShapeOf(node.inputs[1], &node));
    const int64_t k = ws.dims[0], per_k = ws.NumElements() / k;
    std::vector<float> bias(k, 0.0f);
    if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
      TF_ASSIGN_OR_RETURN(bias, Constant(node, 2, "bias"));
    }
    std::string out = node.outputs[0];
    const int next = SoleConsumer(out);
    if (next >= 0 && graph_.nodes[next].op_type == "BatchNormalization") {
      // y = (conv + b - mean) * scale / sqrt(var + eps) + beta, per channel.
      const GraphNode& bn = graph_.nodes[next];
      TF_ASSIGN_OR_RETURN(std::vector<float> scale, Constant(bn, 1, "scale"));
      TF_ASSIGN_OR_RETURN(std::vector<float> beta, Constant(bn, 2, "bias"));
      TF_ASSIGN_OR_RETURN(std::vector<float> mean, Constant(bn, 3, "mean"));
      TF_ASSIGN_OR_RETURN(std::vector<float> var, Constant(bn, 4, "var"));
      const double eps = bn.attributes.value("epsilon", 1e-5);
      for (int64_t c = 0; c < k; ++c) {
        const double s = scale[c] / std::sqrt(static_cast<double>(var[c]) + eps);
        for (int64_t i = 0; i < per_k; ++i)
          w[c * per_k + i] = static_cast<float>(w[c * per_k + i] * s);
        bias[c] = static_cast<float>((bias[c] - mean[c]) * s + beta[c]);
      }
      consumed_.insert(next);
      out = bn.outputs[0];
    }
    TF_ASSIGN_OR_RETURN(TensorShape os, graph_.ShapeOf(out, &node));
    const int weights = AddConstant(node.name + ".weight", w);
    return AddKernelStep(node, layer, input, weights, std::move(bias), out, k,
                         os.dims[2] * os.dims[3]);
  }

  [[nodiscard]] absl::Status AddGemm(const GraphNode& node, const ModelLayer& layer) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(std::vector<float> b, Constant(node, 1, "B"));
    TF_ASSIGN_OR_RETURN(TensorShape bs, graph_.ShapeOf(node.inputs[1], &node));
    const bool trans_b = node.op_type == "Gemm" && IntAttribute(node, "transB", 0) != 0;
    const int64_t n = layer.args["N"].get<int64_t>(), k = layer.args["K"].get<int64_t>();
    const float alpha = node.attributes.value("alpha", 1.0f);
    const float beta = node.attributes.value("beta", 1.0f);
    std::vector<float> nk(n * k);  // the dense workload's B is [N, K]
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < k; ++c) {
        nk[r * k + c] = alpha * (trans_b ? b[r * k + c] : b[c * n + r]);
      }
    }
    (void)bs;
    std::vector<float> bias;
    if (node.op_type == "Gemm" && node.inputs.size() > 2 && !node.inputs[2].empty()) {
      TF_ASSIGN_OR_RETURN(bias, Constant(node, 2, "C"));
      if (static_cast<int64_t>(bias.size()) != n) {
        return NodeError(node, absl::StrCat("bias C of ", bias.size(),
                                            " values does not broadcast as a row of ", n));
      }
      for (float& v : bias) v *= beta;
    }
    const int weights = AddConstant(node.name + ".weight", nk);
    return AddKernelStep(node, layer, input, weights, std::move(bias), node.outputs[0], n, 1);
  }

  [[nodiscard]] absl::Status AddPool(const GraphNode& node) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(TensorShape in, graph_.ShapeOf(node.inputs[0], &node));
    TF_ASSIGN_OR_RETURN(TensorShape out, graph_.ShapeOf(node.outputs[0], &node));
    if (in.dims.size() != 4) return NodeError(node, "only 2-D pooling (NCHW) is supported");
    PlanStep step;
    step.node = node.name;
    step.in_shape = in.dims;
    step.out_shape = out.dims;
    if (node.op_type == "GlobalAveragePool") {
      step.op = "global_avg_pool";
    } else {
      step.op = node.op_type == "MaxPool" ? "max_pool" : "avg_pool";
      if (StringAttribute(node, "auto_pad", "NOTSET") != "NOTSET") {
        return NodeError(node, "auto_pad is not supported for pooling");
      }
      if (IntsAttribute(node, "dilations", {1, 1}) != std::vector<int64_t>{1, 1}) {
        return NodeError(node, "dilated pooling is not supported");
      }
      if (node.outputs.size() > 1 && !node.outputs[1].empty()) {
        return NodeError(node, "MaxPool's Indices output is not supported");
      }
      step.kernel_shape = IntsAttribute(node, "kernel_shape", {});
      step.strides = IntsAttribute(node, "strides", {1, 1});
      step.pads = IntsAttribute(node, "pads", {0, 0, 0, 0});
      step.count_include_pad = IntAttribute(node, "count_include_pad", 0) != 0;
      if (step.kernel_shape.size() != 2 || step.strides.size() != 2 || step.pads.size() != 4) {
        return NodeError(node, "kernel_shape, strides or pads do not fit 2-D pooling");
      }
    }
    step.inputs = {input};
    TF_ASSIGN_OR_RETURN(int output, Output(node, node.outputs[0]));
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status AddElementwise(const GraphNode& node) {
    PlanStep step;
    step.node = node.name;
    TF_ASSIGN_OR_RETURN(int a, Input(node, 0));
    step.inputs = {a};
    if (node.op_type == "Add") {
      step.op = "add";
      TF_ASSIGN_OR_RETURN(int b, Input(node, 1));
      TF_ASSIGN_OR_RETURN(TensorShape sa, graph_.ShapeOf(node.inputs[0], &node));
      TF_ASSIGN_OR_RETURN(TensorShape sb, graph_.ShapeOf(node.inputs[1], &node));
      if (sa.dims != sb.dims) {
        return NodeError(node, absl::StrCat("broadcasting Add of ", sa.ToString(), " and ",
                                            sb.ToString(), " is not supported"));
      }
      step.inputs.push_back(b);
    } else if (node.op_type == "Relu") {
      step.op = "relu";
    } else {
      step.op = "clip";
      TF_ASSIGN_OR_RETURN(auto bounds, ClipBounds(node));
      step.clip_min = bounds.first;
      step.clip_max = bounds.second;
    }
    TF_ASSIGN_OR_RETURN(int output, Output(node, node.outputs[0]));
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status AddSoftmax(const GraphNode& node) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(TensorShape in, graph_.ShapeOf(node.inputs[0], &node));
    const int64_t rank = static_cast<int64_t>(in.dims.size());
    int64_t axis = IntAttribute(node, "axis", -1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return NodeError(node, "axis out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= in.dims[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= in.dims[i];
    PlanStep step;
    step.op = "softmax";
    step.node = node.name;
    step.in_shape = {outer, in.dims[axis], inner};
    step.inputs = {input};
    TF_ASSIGN_OR_RETURN(int output, Output(node, node.outputs[0]));
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status AddNode(size_t index) {
    const GraphNode& node = graph_.nodes[index];
    const std::string& op = node.op_type;
    auto layer = layers_.find(node.name);
    if (op == "Conv" || op == "Gemm" || op == "MatMul") {
      if (layer == layers_.end()) {
        return NodeError(node,
                         "not a tuned operator shape (grouped convolution, transA, ...) "
                         "and no other implementation exists");
      }
      if (layer->second->workload == "batch_matmul") {
        return NodeError(node, "batched MatMul is not supported by compile yet");
      }
      if (op == "Conv") return AddConv(node, *layer->second);
      if (op == "MatMul" && node.inputs.size() == 2 && !IsConstant(node.inputs[1])) {
        return NodeError(node, "MatMul of two activations is not supported by compile yet");
      }
      return AddGemm(node, *layer->second);
    }
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return AddPool(node);
    if (op == "Add" || op == "Relu" || op == "Clip") return AddElementwise(node);
    if (op == "Softmax") return AddSoftmax(node);
    if (op == "Flatten" || op == "Reshape" || op == "Identity" || op == "Dropout" ||
        op == "Squeeze" || op == "Unsqueeze") {
      // Same floats in the same order: the output names the input's buffer.
      if (!node.inputs.empty() && IsConstant(node.inputs[0])) {
        constant_alias_[node.outputs[0]] = ResolveConstant(node.inputs[0]);
        return absl::OkStatus();
      }
      TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
      tensors_[node.outputs[0]] = input;
      return absl::OkStatus();
    }
    if (op == "BatchNormalization") {
      return NodeError(node, "BatchNormalization is supported only right after a Conv (folded)");
    }
    return NodeError(
        node, absl::StrCat("operator '", op, "' is not supported by tunefleet compile (supported: ",
                           absl::StrJoin(SupportedOperators(), ", "), ")"));
  }

  const Graph& graph_;
  const ChooseKernelFn& choose_;
  std::map<std::string, const ModelLayer*> layers_;  // by node name
  std::map<std::string, std::vector<size_t>> consumers_;
  std::set<std::string> graph_outputs_;
  std::set<size_t> consumed_;                          // nodes fused into an earlier step
  std::map<std::string, int> tensors_;                 // tensor -> buffer
  std::map<std::string, std::string> constant_alias_;  // Identity of a constant -> it
  std::map<std::string, size_t> kernel_by_key_;
  BuiltPlan built_;
};

}  // namespace

const std::vector<std::string>& SupportedOperators() {
  static const std::vector<std::string> ops = {"Conv",
                                               "Gemm",
                                               "MatMul (constant 2-D weights)",
                                               "BatchNormalization (after Conv)",
                                               "Relu",
                                               "Clip",
                                               "Add",
                                               "MaxPool",
                                               "AveragePool",
                                               "GlobalAveragePool",
                                               "Softmax",
                                               "Flatten",
                                               "Reshape",
                                               "Identity",
                                               "Dropout",
                                               "Squeeze",
                                               "Unsqueeze"};
  return ops;
}

[[nodiscard]] absl::StatusOr<BuiltPlan> BuildPlan(const Graph& graph,
                                                  const std::vector<ModelLayer>& layers,
                                                  const ChooseKernelFn& choose) {
  return PlanBuilder(graph, layers, choose).Build();
}

}  // namespace tunefleet
