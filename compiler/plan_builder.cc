#include "compiler/plan_builder.h"

#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "compiler/constant_folding.h"
#include "compiler/kernel_packing.h"
#include "compiler/tensor_op_lowering.h"

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
      built_.plan.buffers[id].shape = shape.dims;
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
      TF_ASSIGN_OR_RETURN(int buffer, Plain(it->second));
      built_.plan.outputs.push_back({output, buffer, shape.dims});
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

  // A buffer for 4-D `tensor` in NCHW[block]c with rows `row_width` wide;
  // `binds`: the buffer the graph's readers of `tensor` find (not so for a
  // relayout copy, which only the consumer that asked for it reads).
  int NewActivation(const std::string& tensor, const std::vector<int64_t>& dims, int64_t block,
                    int64_t row_width, bool binds = true) {
    const auto previous = tensors_.find(tensor);
    const int bound = previous == tensors_.end() ? -1 : previous->second;
    const int id = NewBuffer(tensor, dims[0] * dims[1] * dims[2] * row_width);
    if (!binds) {
      if (bound >= 0) {
        tensors_[tensor] = bound;
      } else {
        tensors_.erase(tensor);
      }
    }
    PlanBuffer& buffer = built_.plan.buffers[id];
    buffer.shape = dims;
    buffer.block = block;
    buffer.row_width = row_width;
    return id;
  }

  // `id` as NCHW[block]c with rows `row_width` wide: itself when it is laid
  // out so, else a buffer a relayout step fills (one per layout asked for).
  [[nodiscard]] absl::StatusOr<int> InLayout(int id, int64_t block, int64_t row_width) {
    const PlanBuffer& buffer = built_.plan.buffers[id];
    if (!buffer.is_4d()) {
      if (block == 1) return id;
      return absl::InternalError(absl::StrCat("tensor '", buffer.tensor, "' is not 4-D"));
    }
    if (buffer.block == block && buffer.RowWidth() == row_width) return id;
    const auto key = std::make_tuple(id, block, row_width);
    auto it = relayouts_.find(key);
    if (it != relayouts_.end()) return it->second;
    const std::string tensor = buffer.tensor;
    const std::vector<int64_t> dims = buffer.shape;
    const int converted = NewActivation(tensor, dims, block, row_width, /*binds=*/false);
    PlanStep step;
    step.op = "relayout";
    step.node = built_.plan.buffers[id].tensor;
    step.inputs = {id};
    step.outputs = {converted};
    built_.plan.steps.push_back(std::move(step));
    relayouts_[key] = converted;
    return converted;
  }
  // `id` in NCHW (or itself when not 4-D).
  [[nodiscard]] absl::StatusOr<int> Plain(int id) {
    const PlanBuffer& buffer = built_.plan.buffers[id];
    return buffer.is_4d() ? InLayout(id, 1, buffer.shape[3]) : absl::StatusOr<int>(id);
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
    const int id = NewBuffer(tensor, shape.NumElements());
    built_.plan.buffers[id].shape = shape.dims;
    return id;
  }

  // An output like `like`'s layout (same block and row width) for `tensor`
  // of the same dims, or NCHW when `like` is NCHW.
  [[nodiscard]] absl::StatusOr<int> OutputLike(const GraphNode& node, const std::string& tensor,
                                               int like) {
    const PlanBuffer layout = built_.plan.buffers[like];
    if (layout.is_plain()) return Output(node, tensor);
    TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(tensor, &node));
    return NewActivation(tensor, shape.dims, layout.block, layout.RowWidth());
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
  // `bias`: for dense kernels, where an Add of a constant row of
  // `channels` floats (a MatMul's bias) is folded; null for others.
  [[nodiscard]] absl::StatusOr<std::string> FuseEpilogue(std::string out, PlanEpilogue* e,
                                                         std::vector<float>* bias) {
    for (;;) {
      const int next = SoleConsumer(out);
      if (next < 0) return out;
      const GraphNode& node = graph_.nodes[next];
      const std::string& other =
          node.inputs.size() == 2 && node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
      if (node.op_type == "Add" && bias != nullptr && e->residual < 0 && e->activation == "none" &&
          node.inputs.size() == 2 && IsConstant(other)) {
        auto row = graph_.constants.find(ResolveConstant(other));
        if (row->second.shape.dtype != kOnnxFloat ||
            static_cast<int64_t>(row->second.f32.size()) != e->channels ||
            graph_.ShapeOf(node.outputs[0]).value_or(TensorShape()).dims !=
                graph_.ShapeOf(out).value_or(TensorShape()).dims) {
          return out;
        }
        bias->resize(e->channels, 0.0f);
        for (int64_t c = 0; c < e->channels; ++c) (*bias)[c] += row->second.f32[c];
      } else if (node.op_type == "Add" && e->residual < 0 && e->activation == "none" &&
                 node.inputs.size() == 2) {
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
    }
  }

  // A tuned kernel over `input` with `weights` ([K, C, R, S] for a
  // convolution, [N, K] for dense), its bias and what FuseEpilogue folds.
  // A blocked convolution (kernel_packing.h) reads its input and writes its
  // output in NCHW[x]c with its weights packed here; other kernels see NCHW.
  [[nodiscard]] absl::Status AddKernelStep(const GraphNode& node, const ModelLayer& layer,
                                           int input, const std::vector<float>& weights,
                                           std::vector<float> bias, std::string out,
                                           int64_t channels) {
    TF_ASSIGN_OR_RETURN(KernelChoice choice, choose_(layer));
    std::optional<BlockedConvKernel> blocked;
    std::optional<PackedDenseKernel> dense;  // weights packed here, not per call
    if (layer.workload != "dense") {
      TF_ASSIGN_OR_RETURN(blocked, BlockedConvOf(choice));
    } else {
      TF_ASSIGN_OR_RETURN(dense, PackedDenseOf(choice));
    }
    PlanStep step;
    step.op = "kernel";
    step.node = node.name;
    step.symbol = KernelSymbol(node, layer, std::move(choice));
    step.epilogue.channels = channels;
    TF_ASSIGN_OR_RETURN(
        out, FuseEpilogue(out, &step.epilogue, layer.workload == "dense" ? &bias : nullptr));
    if (!bias.empty()) step.epilogue.bias = AddConstant(node.name + ".bias", bias);
    TF_ASSIGN_OR_RETURN(TensorShape out_shape, graph_.ShapeOf(out, &node));
    int output = -1;
    if (blocked) {
      const int64_t in_w = built_.plan.buffers[input].shape.at(3);
      TF_ASSIGN_OR_RETURN(input, InLayout(input, blocked->in_block, in_w));
      const int packed =
          AddConstant(node.name + ".weight_packed", PackBlockedWeights(weights, *blocked));
      output = NewActivation(out, out_shape.dims, blocked->out_block, blocked->out_row_width);
      step.epilogue.block = blocked->out_block;
      step.epilogue.inner = out_shape.dims[2] * blocked->out_row_width;
      step.inputs = {input, packed};
      step.staged = {input, packed, output};
    } else {
      TF_ASSIGN_OR_RETURN(input, Plain(input));
      const int w =
          dense ? AddConstant(node.name + ".weight_packed", PackDenseWeights(weights, *dense))
                : AddConstant(node.name + ".weight", weights);
      step.inputs = {input, w};
      if (dense) step.staged = {w};  // B's argument is unread: the entry reads Bp
      TF_ASSIGN_OR_RETURN(output, Output(node, out));
      step.epilogue.inner = out_shape.dims.size() == 4 ? out_shape.dims[2] * out_shape.dims[3] : 1;
    }
    if (step.epilogue.residual >= 0) {
      const PlanBuffer& o = built_.plan.buffers[output];
      if (o.is_4d()) {
        TF_ASSIGN_OR_RETURN(step.epilogue.residual,
                            InLayout(step.epilogue.residual, o.block, o.RowWidth()));
      }
    }
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // The symbol of the kernel for `choice`, one per distinct (template,
  // workload, config).
  std::string KernelSymbol(const GraphNode& node, const ModelLayer& layer, KernelChoice choice) {
    const std::string key = absl::StrCat(choice.task->name(), "|", layer.workload, "|",
                                         layer.args.dump(), "|", choice.config.ToJson().dump());
    auto [it, inserted] = kernel_by_key_.try_emplace(key, built_.kernels.size());
    if (inserted) {
      const std::string symbol = absl::StrCat("tf_kernel_", built_.kernels.size());
      built_.kernels.push_back({symbol, std::move(choice), {}});
    }
    built_.kernels[it->second].nodes.push_back(node.name);
    return built_.kernels[it->second].symbol;
  }

  // A buffer holding `tensor`: its activation (NCHW) or, for a float
  // constant, a copy in the weights (one per constant).
  [[nodiscard]] absl::StatusOr<int> Operand(const GraphNode& node, const std::string& tensor) {
    if (!IsConstant(tensor)) {
      auto it = tensors_.find(tensor);
      if (it == tensors_.end()) {
        return NodeError(node, absl::StrCat("input '", tensor, "' is not computed before it"));
      }
      return Plain(it->second);
    }
    const std::string name = ResolveConstant(tensor);
    auto it = constant_buffers_.find(name);
    if (it != constant_buffers_.end()) return it->second;
    const ConstantTensor& c = graph_.constants.at(name);
    if (c.shape.dtype != kOnnxFloat) {
      return NodeError(node, absl::StrCat("'", tensor, "' is not a float32 constant"));
    }
    return constant_buffers_[name] = AddConstant(name, c.f32);
  }

  // MatMul of [B, M, K] by [B, K, N] on the tuned batch_matmul kernel
  // (layout KN: both operands as ONNX has them, no packing here).
  [[nodiscard]] absl::Status AddBatchMatmul(const GraphNode& node, const ModelLayer& layer) {
    TF_ASSIGN_OR_RETURN(KernelChoice choice, choose_(layer));
    if (layer.args.value("layout", std::string("NK")) != "KN") {
      return NodeError(node, "batch_matmul task of a layout other than KN");
    }
    PlanStep step;
    step.op = "kernel";
    step.node = node.name;
    step.symbol = KernelSymbol(node, layer, std::move(choice));
    for (size_t i = 0; i < 2; ++i) {
      TF_ASSIGN_OR_RETURN(int operand, Operand(node, node.inputs.at(i)));
      step.inputs.push_back(operand);
    }
    TF_ASSIGN_OR_RETURN(int output, Output(node, node.outputs[0]));
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // A tensor operator of tensor_op_lowering.h on plain buffers.
  [[nodiscard]] absl::Status AddTensorOp(const GraphNode& node, LoweredTensorOp lowered) {
    for (const std::string& tensor : lowered.operands) {
      TF_ASSIGN_OR_RETURN(int operand, Operand(node, tensor));
      lowered.step.inputs.push_back(operand);
    }
    TF_ASSIGN_OR_RETURN(int output, Output(node, node.outputs[0]));
    lowered.step.outputs = {output};
    built_.plan.steps.push_back(std::move(lowered.step));
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
    return AddKernelStep(node, layer, input, w, std::move(bias), out, k);
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
    return AddKernelStep(node, layer, input, nk, std::move(bias), node.outputs[0], n);
  }

  [[nodiscard]] absl::Status AddPool(const GraphNode& node) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(TensorShape in, graph_.ShapeOf(node.inputs[0], &node));
    TF_ASSIGN_OR_RETURN(TensorShape out, graph_.ShapeOf(node.outputs[0], &node));
    if (in.dims.size() != 4) return NodeError(node, "only 2-D pooling (NCHW) is supported");
    if (built_.plan.buffers[input].shape != in.dims) {
      // A reshaped alias: give the floats their 4-D shape.
      PlanStep copy;
      copy.op = "copy";
      copy.node = node.name;
      copy.inputs = {input};
      input = NewActivation(node.inputs[0], in.dims, 1, in.dims[3]);
      copy.outputs = {input};
      built_.plan.steps.push_back(std::move(copy));
    }
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
    // Pooling keeps the channel block (rows exactly the output's width);
    // global pooling leaves [N, C, 1, 1], the same floats in every block.
    const int64_t block = built_.plan.buffers[input].block;
    const int output = step.op == "global_avg_pool"
                           ? NewActivation(node.outputs[0], out.dims, 1, out.dims[3])
                           : NewActivation(node.outputs[0], out.dims, block, out.dims[3]);
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
      const PlanBuffer &la = built_.plan.buffers[a], &lb = built_.plan.buffers[b];
      if (la.block != lb.block || la.RowWidth() != lb.RowWidth()) {
        TF_ASSIGN_OR_RETURN(a, Plain(a));
        TF_ASSIGN_OR_RETURN(b, Plain(b));
        step.inputs = {a};
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
    // Elementwise: any layout, the output's the same as the inputs'.
    TF_ASSIGN_OR_RETURN(int output, OutputLike(node, node.outputs[0], a));
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
      if (layer->second->workload == "batch_matmul") return AddBatchMatmul(node, *layer->second);
      if (op == "Conv") return AddConv(node, *layer->second);
      if (op == "MatMul" && node.inputs.size() == 2 && !IsConstant(node.inputs[1])) {
        return NodeError(node, "MatMul of two activations is not supported by compile yet");
      }
      return AddGemm(node, *layer->second);
    }
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") return AddPool(node);
    const bool same_shape_add = op == "Add" && node.inputs.size() == 2 &&
                                !IsConstant(node.inputs[0]) && !IsConstant(node.inputs[1]) &&
                                graph_.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims ==
                                    graph_.ShapeOf(node.inputs[1]).value_or(TensorShape()).dims;
    if (same_shape_add || op == "Relu" || op == "Clip") return AddElementwise(node);
    TF_ASSIGN_OR_RETURN(std::optional<LoweredTensorOp> lowered, LowerTensorOp(graph_, node));
    if (lowered) return AddTensorOp(node, std::move(*lowered));
    if (op == "Flatten" || op == "Reshape" || op == "Identity" || op == "Dropout" ||
        op == "Squeeze" || op == "Unsqueeze") {
      // Same floats in the same order: the output names the input's buffer.
      if (!node.inputs.empty() && IsConstant(node.inputs[0])) {
        constant_alias_[node.outputs[0]] = ResolveConstant(node.inputs[0]);
        return absl::OkStatus();
      }
      TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
      TF_ASSIGN_OR_RETURN(input, Plain(input));
      tensors_[node.outputs[0]] = input;
      return absl::OkStatus();
    }
    return NodeError(
        node, absl::StrCat("operator '", op, "' is not supported by tunefleet compile (supported: ",
                           absl::StrJoin(SupportedOperators(), ", "), ", ",
                           absl::StrJoin(TensorOperators(), ", "), ")"));
  }

  const Graph& graph_;
  const ChooseKernelFn& choose_;
  std::map<std::string, const ModelLayer*> layers_;  // by node name
  std::map<std::string, std::vector<size_t>> consumers_;
  std::set<std::string> graph_outputs_;
  std::set<size_t> consumed_;                          // nodes fused into an earlier step
  std::map<std::string, int> tensors_;                 // tensor -> buffer
  std::map<std::string, std::string> constant_alias_;  // Identity of a constant -> it
  std::map<std::string, int> constant_buffers_;        // float constant -> its buffer
  std::map<std::string, size_t> kernel_by_key_;
  std::map<std::tuple<int, int64_t, int64_t>, int> relayouts_;  // (buffer, block, row) -> copy
  BuiltPlan built_;
};

}  // namespace

const std::vector<std::string>& SupportedOperators() {
  static const std::vector<std::string> ops = absl::StrSplit(
      "Conv;Gemm;MatMul (constant 2-D weights, or batched);BatchNormalization (folded into "
      "a preceding "
      "Conv);Relu;Clip;Add;MaxPool;AveragePool;GlobalAveragePool;Softmax;Flatten;Reshape;Identity;"
      "Dropout;Squeeze;Unsqueeze",
      ';');
  return ops;
}

[[nodiscard]] absl::StatusOr<BuiltPlan> BuildPlan(const Graph& graph,
                                                  const std::vector<ModelLayer>& layers,
                                                  const ChooseKernelFn& choose) {
  // Shape-computing subgraphs become constants first, so the plan holds
  // only real compute.
  TF_ASSIGN_OR_RETURN(Graph folded, FoldConstants(graph));
  TF_RETURN_IF_ERROR(InferTensorOpShapes(&folded));
  return PlanBuilder(folded, layers, choose).Build();
}

}  // namespace tunefleet
