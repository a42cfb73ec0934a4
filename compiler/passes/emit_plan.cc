#include "compiler/passes/emit_plan.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "compiler/kernel_packing.h"
#include "compiler/operator_table.h"
#include "compiler/passes/plan_buffers.h"
#include "compiler/passes/prune_steps.h"
#include "compiler/pool_lowering.h"
#include "compiler/tensor_op_lowering.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

class PlanEmitter {
 public:
  PlanEmitter(const Graph& graph, const std::vector<ModelLayer>& layers,
              const EpilogueFusion& fusion, const ChooseKernelFn& choose)
      : graph_(graph), fusion_(fusion), choose_(choose) {
    for (const ModelLayer& layer : layers) layers_[layer.name] = &layer;
  }

  [[nodiscard]] absl::StatusOr<BuiltPlan> Build() {
    for (const std::string& input : graph_.inputs) {
      TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(input));
      const int id = buffers_.NewBuffer(input, shape.NumElements());
      built_.plan.buffers[id].shape = shape.dims;
      TF_ASSIGN_OR_RETURN(ElementType type, InputElementType(input, shape.dtype));
      built_.plan.inputs.push_back({input, id, shape.dims, type});
    }
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (fusion_.fused_nodes.count(i)) continue;
      TF_RETURN_IF_ERROR(AddNode(i));
    }
    for (const std::string& output : graph_.outputs) {
      TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(output));
      const int found = buffers_.Find(output);
      if (found < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph output '", output, "' is computed by no supported node"));
      }
      TF_ASSIGN_OR_RETURN(int buffer, buffers_.Plain(found));
      built_.plan.outputs.push_back({output, buffer, shape.dims});
    }
    DropUnreadChannelGathers(&built_.plan);
    built_.plan.weight_floats = static_cast<int64_t>(built_.weights.size());
    return std::move(built_);
  }

 private:
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
    return Bound(node, node.inputs[i]);
  }
  // The buffer `tensor` is in, in whatever layout its producer wrote.
  [[nodiscard]] absl::StatusOr<int> Bound(const GraphNode& node, const std::string& tensor) {
    const int found = buffers_.Find(tensor);
    if (found < 0) {
      return NodeError(node, absl::StrCat("input '", tensor, "' is not computed before it"));
    }
    return found;
  }

  [[nodiscard]] absl::StatusOr<int> Output(const GraphNode& node, const std::string& tensor) {
    TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(tensor, &node));
    const int id = buffers_.NewBuffer(tensor, shape.NumElements());
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
    return buffers_.NewActivation(tensor, shape.dims, layout.block, layout.RowWidth());
  }

  // A tuned kernel over `input` with `weights` ([K, C, R, S] for a convolution, [N, K] for
  // dense), its bias and the epilogue fusion gave it. A blocked convolution (kernel_packing.h)
  // reads and writes NCHW[x]c, its weights packed here; other kernels see NCHW.
  [[nodiscard]] absl::Status AddKernelStep(const GraphNode& node, const ModelLayer& layer,
                                           int input, const std::vector<float>& weights,
                                           std::vector<float> bias, int64_t channels) {
    TF_ASSIGN_OR_RETURN(KernelChoice choice, choose_(layer));
    std::optional<BlockedConvKernel> blocked;
    std::optional<PackedDenseKernel> dense;  // weights packed here, not per call
    if (layer.workload != "dense") {
      TF_ASSIGN_OR_RETURN(blocked, BlockedConvOf(choice));
    } else {
      TF_ASSIGN_OR_RETURN(dense, PackedDenseOf(choice));
    }
    if (blocked) {  // its producer's block read as it is where that costs no more
      TF_ASSIGN_OR_RETURN(input, As4d(node, node.inputs[0], input));
      const PlanBuffer& in = built_.plan.buffers[input];
      TF_RETURN_IF_ERROR(
          ReadInputInBlockWhereFree(in.block, in.RowWidth() == in.shape.at(3), &choice, &*blocked));
    }
    PlanStep step;
    step.op = StepOp::kKernel;
    step.node = node.name;
    step.symbol = KernelSymbol(node, std::move(choice));
    step.epilogue.channels = channels;
    std::string out = node.outputs[0];
    auto fused = fusion_.by_kernel.find(node.name);
    if (fused != fusion_.by_kernel.end()) {
      const FusedEpilogue& e = fused->second;
      out = e.output;
      for (const std::string& row : e.bias_rows) {
        const std::vector<float>& values = graph_.constants.at(row).f32;
        bias.resize(channels, 0.0f);
        for (int64_t c = 0; c < channels; ++c) bias[c] += values[c];
      }
      if (!e.residual.empty() && IsConstant(e.residual)) {  // a Gemm's C of the output's shape
        TF_ASSIGN_OR_RETURN(std::vector<float> c, GemmMatrixBias(graph_, node));
        step.epilogue.residual = buffers_.AddConstant(node.name + ".c", c);
      } else if (!e.residual.empty()) {
        TF_ASSIGN_OR_RETURN(step.epilogue.residual, Bound(node, e.residual));
      }
      step.epilogue.activation = e.activation;
    }
    if (!bias.empty()) step.epilogue.bias = buffers_.AddConstant(node.name + ".bias", bias);
    TF_ASSIGN_OR_RETURN(TensorShape out_shape, graph_.ShapeOf(out, &node));
    int output = -1;
    if (blocked) {
      const int64_t in_w = built_.plan.buffers[input].shape.at(3);
      TF_ASSIGN_OR_RETURN(input, buffers_.InLayout(input, blocked->in_block, in_w));
      const int packed =
          buffers_.AddConstant(node.name + ".weight_packed", PackBlockedWeights(weights, *blocked));
      output =
          buffers_.NewActivation(out, out_shape.dims, blocked->out_block, blocked->out_row_width);
      step.epilogue.block = blocked->out_block;
      step.epilogue.inner = out_shape.dims[2] * blocked->out_row_width;
      step.inputs = {input, packed};
      step.staged = {input, packed, output};
      if (blocked->winograd_tile == 0) {  // fold_channel_scales.h's taps (Winograd's U has none)
        step.kernel_shape = {blocked->r, blocked->s, blocked->reduce_block};
      }
    } else {
      TF_ASSIGN_OR_RETURN(input, buffers_.Plain(input));
      const int w = dense ? buffers_.AddConstant(node.name + ".weight_packed",
                                                 PackDenseWeights(weights, *dense))
                          : buffers_.AddConstant(node.name + ".weight", weights);
      step.inputs = {input, w};
      if (dense) step.staged = {w};  // B's argument is unread: the entry reads Bp
      TF_ASSIGN_OR_RETURN(output, Output(node, out));
      // An NCHW convolution's channel is dim 1 (H * W positions each); a
      // dense layer's is the last, whatever the rank (ConvNeXt's [N, H, W, C]).
      const bool nchw = layer.workload != "dense" && out_shape.dims.size() == 4;
      step.epilogue.inner = nchw ? out_shape.dims[2] * out_shape.dims[3] : 1;
    }
    if (step.epilogue.residual >= 0) {
      const PlanBuffer& o = built_.plan.buffers[output];
      if (o.is_4d()) {
        TF_ASSIGN_OR_RETURN(step.epilogue.residual,
                            buffers_.InLayout(step.epilogue.residual, o.block, o.RowWidth()));
      }
    }
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // The symbol of the kernel for `choice`: one per (template, workload, config).
  std::string KernelSymbol(const GraphNode& node, KernelChoice choice) {
    const std::string key =
        absl::StrCat(choice.task->name(), "|", choice.task->workload().Describe(), "|",
                     choice.config.ToJson().dump());
    auto [it, inserted] = kernel_by_key_.try_emplace(key, built_.kernels.size());
    if (inserted) {
      const std::string symbol = absl::StrCat("tf_kernel_", built_.kernels.size());
      built_.kernels.push_back({symbol, std::move(choice), {}});
    }
    built_.kernels[it->second].nodes.push_back(node.name);
    return built_.kernels[it->second].symbol;
  }

  // `buffer` (holding 4-D `tensor`) as a 4-D buffer: itself, or a view of
  // it with the tensor's shape where a reshape aliased it from another rank
  // (a channel shuffle's [N, g, C/g, H, W] read back as [N, C, H, W]).
  [[nodiscard]] absl::StatusOr<int> As4d(const GraphNode& node, const std::string& tensor,
                                         int buffer) {
    if (built_.plan.buffers[buffer].is_4d()) return buffer;
    TF_ASSIGN_OR_RETURN(TensorShape shape, graph_.ShapeOf(tensor, &node));
    if (shape.dims.size() != 4) return NodeError(node, absl::StrCat("'", tensor, "' is not 4-D"));
    return buffers_.NewView(tensor, buffer, shape.dims, 1, shape.dims[3], /*binds=*/false);
  }

  // A buffer holding `tensor`: its activation (NCHW) or, for a float
  // constant, a copy in the weights (one per constant).
  [[nodiscard]] absl::StatusOr<int> Operand(const GraphNode& node, const std::string& tensor) {
    if (!IsConstant(tensor)) {
      TF_ASSIGN_OR_RETURN(int bound, Bound(node, tensor));
      return buffers_.Plain(bound);
    }
    const std::string name = ResolveConstant(tensor);
    auto it = constant_buffers_.find(name);
    if (it != constant_buffers_.end()) return it->second;
    const ConstantTensor& c = graph_.constants.at(name);
    if (IsIntegerDtype(c.shape.dtype)) {  // Pow's integer exponent: the same values as floats
      return constant_buffers_[name] =
                 buffers_.AddConstant(name, std::vector<float>(c.i64.begin(), c.i64.end()));
    }
    if (c.shape.dtype != kOnnxFloat) {
      return NodeError(node, absl::StrCat("'", tensor, "' is not a float32 constant"));
    }
    return constant_buffers_[name] = buffers_.AddConstant(name, c.f32);
  }

  // MatMul of [B, M, K] by [B, K, N] on the tuned batch_matmul kernel
  // (layout KN: both operands as ONNX has them, no packing here).
  [[nodiscard]] absl::Status AddBatchMatmul(const GraphNode& node, const ModelLayer& layer) {
    TF_ASSIGN_OR_RETURN(KernelChoice choice, choose_(layer));
    if (layer.args.value("layout", std::string("NK")) != "KN") {
      return NodeError(node, "batch_matmul task of a layout other than KN");
    }
    PlanStep step;
    step.op = StepOp::kKernel;
    step.node = node.name;
    step.symbol = KernelSymbol(node, std::move(choice));
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
  [[nodiscard]] absl::Status AddTensorOp(const GraphNode& node, LoweredTensorOp lowered,
                                         const std::string& output_tensor = "") {
    for (const std::string& tensor : lowered.operands) {
      TF_ASSIGN_OR_RETURN(int operand, Operand(node, tensor));
      lowered.step.inputs.push_back(operand);
    }
    TF_ASSIGN_OR_RETURN(int output,
                        Output(node, output_tensor.empty() ? node.outputs[0] : output_tensor));
    lowered.step.outputs = {output};
    for (size_t i = 0; i < lowered.more_outputs.size(); ++i) {
      const std::string& tensor = lowered.more_outputs[i];
      if (tensor.empty()) {
        const int64_t rows = lowered.step.in_shape.empty() ? 1 : lowered.step.in_shape[0];
        lowered.step.outputs.push_back(
            buffers_.NewBuffer(absl::StrCat(node.name, ".output", i + 1), rows));
      } else {
        TF_ASSIGN_OR_RETURN(int id, Output(node, tensor));
        lowered.step.outputs.push_back(id);
      }
    }
    built_.plan.steps.push_back(std::move(lowered.step));
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status AddConv(const GraphNode& node, const ModelLayer& layer) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(std::vector<float> w, Constant(node, 1, "weight"));
    TF_ASSIGN_OR_RETURN(TensorShape ws, graph_.ShapeOf(node.inputs[1], &node));
    const int64_t k = ws.dims[0];
    std::vector<float> bias(k, 0.0f);
    if (node.inputs.size() > 2 && !node.inputs[2].empty()) {
      TF_ASSIGN_OR_RETURN(bias, Constant(node, 2, "bias"));
    }
    return AddKernelStep(node, layer, input, w, std::move(bias), k);
  }

  [[nodiscard]] absl::Status AddGemm(const GraphNode& node, const ModelLayer& layer) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(std::vector<float> b, Constant(node, 1, "B"));
    const int64_t n = layer.args["N"].get<int64_t>(), k = layer.args["K"].get<int64_t>();
    TF_ASSIGN_OR_RETURN(DenseOperands dense, DenseOperandsOf(graph_, node, b, n, k));
    return AddKernelStep(node, layer, input, dense.nk, std::move(dense.bias), n);
  }

  // Pooling, and a ReduceMean over the spatial axes of a 4-D tensor (kept)
  // as the global pooling it is, in whatever channel block its input has.
  [[nodiscard]] absl::Status AddPool(const GraphNode& node) {
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(PlanStep step, PoolStepOf(graph_, node));
    const std::vector<int64_t>&in = step.in_shape, &out = step.out_shape;
    if (built_.plan.buffers[input].shape != in) {  // a 1-D pooling's [N, C, W]: a 4-D view
      TF_ASSIGN_OR_RETURN(int plain, buffers_.Plain(input));
      input = buffers_.NewView(node.inputs[0], plain, in, 1, in[3], /*binds=*/false);
    }
    step.inputs = {input};
    // Pooling keeps the channel block (rows exactly the output's width);
    // global pooling leaves [N, C, 1, 1], the same floats in every block.
    const int64_t block = built_.plan.buffers[input].block;
    const int output = step.op == StepOp::kGlobalAvgPool
                           ? buffers_.NewActivation(node.outputs[0], out, 1, out[3])
                           : buffers_.NewActivation(node.outputs[0], out, block, out[3]);
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // A same-shape Add or a pointwise function: any layout, the output's the
  // same as the inputs'.
  [[nodiscard]] absl::Status AddElementwise(const GraphNode& node, const OperatorInfo& info) {
    PlanStep step;
    step.node = node.name;
    TF_ASSIGN_OR_RETURN(int a, Input(node, 0));
    step.inputs = {a};
    if (info.lowering == OpLowering::kAdd) {
      step.op = StepOp::kAdd;
      TF_ASSIGN_OR_RETURN(int b, Input(node, 1));
      const PlanBuffer &la = built_.plan.buffers[a], &lb = built_.plan.buffers[b];
      if (la.block != lb.block || la.RowWidth() != lb.RowWidth()) {
        TF_ASSIGN_OR_RETURN(a, buffers_.Plain(a));
        TF_ASSIGN_OR_RETURN(b, buffers_.Plain(b));
        step.inputs = {a};
      }
      step.inputs.push_back(b);
    } else {
      step.op = StepOp::kPointwise;
      TF_ASSIGN_OR_RETURN(step.activation, ActivationOf(graph_, node, info));
    }
    TF_ASSIGN_OR_RETURN(int output, OutputLike(node, node.outputs[0], a));
    step.outputs = {output};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // A channel-wise binary operator (ChannelBinaryOf) in its activation's layout.
  [[nodiscard]] absl::Status AddChannelBinary(const GraphNode& node, BinaryFunc func) {
    const int first = ChannelOperandFirst(graph_, node);
    TF_ASSIGN_OR_RETURN(TensorShape b_shape, graph_.ShapeOf(node.inputs[1 - first], &node));
    PlanStep step;
    step.op = StepOp::kChannelBinary;
    step.binary = func;
    step.in_shape = {b_shape.dims.size() == 4 ? b_shape.dims[0] : 1, 0};
    return AddInLayout(node, std::move(step), {node.inputs[first], node.inputs[1 - first]},
                       node.outputs[0]);
  }

  // A Gather or Slice of a 4-D activation's channels (ChannelGatherOf) in
  // its channel block: the output's block the largest that divides both
  // the input's and the output's channels, so a channel shuffle and the
  // halves ShuffleNet slices from it stay blocked between its convolutions.
  [[nodiscard]] absl::Status AddChannelGather(const GraphNode& node, std::vector<int64_t> map) {
    TF_ASSIGN_OR_RETURN(int a, Bound(node, node.inputs[0]));
    TF_ASSIGN_OR_RETURN(a, As4d(node, node.inputs[0], a));
    // A gather of a gather (ShuffleNet's halves of its shuffle) reads the
    // first one's input through both maps; the first, if nothing else
    // reads it, is dropped when the plan is done.
    for (auto it = built_.plan.steps.rbegin(); it != built_.plan.steps.rend(); ++it) {
      if (std::find(it->outputs.begin(), it->outputs.end(), a) == it->outputs.end()) continue;
      if (it->op == StepOp::kChannelGather) {
        for (int64_t& c : map) c = it->indices[c];
        a = it->inputs[0];
      }
      break;
    }
    PlanStep step;
    step.op = StepOp::kChannelGather;
    step.node = node.name;
    step.in_shape = built_.plan.buffers[a].shape;
    step.out_shape = step.in_shape;
    step.out_shape[1] = static_cast<int64_t>(map.size());
    step.indices = std::move(map);
    step.inputs = {a};
    const int64_t block = std::gcd(built_.plan.buffers[a].block, step.out_shape[1]);
    step.outputs = {
        buffers_.NewActivation(node.outputs[0], step.out_shape, block, step.out_shape[3])};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // A 4-D BatchNormalization no kernel absorbed (DenseNet's after each
  // Concat) in its input's layout, with the activation epilogue fusion
  // gave it.
  [[nodiscard]] absl::Status AddBatchNorm(const GraphNode& node, LoweredTensorOp lowered) {
    auto fused = fusion_.by_kernel.find(node.name);
    if (fused != fusion_.by_kernel.end()) lowered.step.activation = fused->second.activation;
    return AddInLayout(node, std::move(lowered.step), node.inputs,
                       fused != fusion_.by_kernel.end() ? fused->second.output : node.outputs[0]);
  }

  // A step on a 4-D activation (operands[0]) in whatever layout its producer
  // wrote (its other operands per channel), writing `output` in that
  // layout; in_shape[1] is set to the channels.
  [[nodiscard]] absl::Status AddInLayout(const GraphNode& node, PlanStep step,
                                         const std::vector<std::string>& operands,
                                         const std::string& output) {
    TF_ASSIGN_OR_RETURN(int a, Bound(node, operands[0]));
    TF_ASSIGN_OR_RETURN(a, As4d(node, operands[0], a));
    step.node = node.name;
    step.in_shape[1] = built_.plan.buffers[a].shape[1];
    step.inputs = {a};
    for (size_t i = 1; i < operands.size(); ++i) {
      TF_ASSIGN_OR_RETURN(int b, Operand(node, operands[i]));
      step.inputs.push_back(b);
    }
    TF_ASSIGN_OR_RETURN(int out, OutputLike(node, output, a));
    step.outputs = {out};
    built_.plan.steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // A channel Concat in the channel block ConcatBlock picks from its inputs'
  // producers' blocks: the blocks joined as they are (LowerBlockedConcat),
  // the inputs in another block relaid into it, none through NCHW.
  [[nodiscard]] absl::StatusOr<bool> AddBlockedConcat(const GraphNode& node) {
    std::vector<ConcatPart> parts;
    for (const std::string& input : node.inputs) {
      const int id = buffers_.Find(input);
      if (id < 0 || !built_.plan.buffers[id].is_4d()) return false;
      const PlanBuffer& buffer = built_.plan.buffers[id];
      parts.push_back({buffer.shape[1], buffer.block, buffer.elements});
    }
    const int64_t block = ConcatBlock(parts);
    TF_ASSIGN_OR_RETURN(std::optional<LoweredTensorOp> lowered,
                        LowerBlockedConcat(graph_, node, block));
    if (!lowered) return false;
    for (const std::string& tensor : lowered->operands) {
      TF_ASSIGN_OR_RETURN(int id, Bound(node, tensor));
      TF_ASSIGN_OR_RETURN(id, buffers_.InLayout(id, block, lowered->step.out_shape[3]));
      lowered->step.inputs.push_back(id);
    }
    const std::vector<int64_t>& dims = lowered->step.out_shape;
    lowered->step.outputs = {buffers_.NewActivation(node.outputs[0], dims, block, dims[3])};
    built_.plan.steps.push_back(std::move(lowered->step));
    return true;
  }

  // NCHW <-> NHWC (ChannelsLastTransposeOf) as a view: NHWC is NCHW[C]c's
  // memory, so at most one relayout, into or out of that block.
  [[nodiscard]] absl::Status AddChannelsLastTranspose(const GraphNode& node, int direction) {
    TF_ASSIGN_OR_RETURN(int a, Input(node, 0));
    TF_ASSIGN_OR_RETURN(TensorShape out, graph_.ShapeOf(node.outputs[0], &node));
    if (direction > 0) {  // [N, C, H, W] -> [N, H, W, C]
      TF_ASSIGN_OR_RETURN(a, buffers_.InLayout(a, out.dims[3], out.dims[2]));
      buffers_.NewView(node.outputs[0], a, out.dims, 1, 0);
    } else {  // [N, H, W, C] -> [N, C, H, W] in NCHW[C]c
      TF_ASSIGN_OR_RETURN(a, buffers_.Plain(a));
      buffers_.NewView(node.outputs[0], a, out.dims, out.dims[1], out.dims[3]);
    }
    return absl::OkStatus();
  }

  // Split: one strided copy of the input per output (LowerSplit).
  [[nodiscard]] absl::Status AddSplit(const GraphNode& node) {
    TF_ASSIGN_OR_RETURN(auto parts, LowerSplit(graph_, node));
    for (auto& [output, lowered] : parts) {
      TF_RETURN_IF_ERROR(AddTensorOp(node, std::move(lowered), output));
    }
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status AddAlias(const GraphNode& node) {
    if (node.op_type == "Cast" &&
        (IntAttribute(node, "to", 0) != kOnnxFloat ||
         graph_.ShapeOf(node.inputs[0]).value_or(TensorShape{0, {}}).dtype != kOnnxFloat)) {
      return NodeError(node, "only a Cast to float32 of float32 is supported at run time");
    }
    if (!node.inputs.empty() && IsConstant(node.inputs[0])) {
      constant_alias_[node.outputs[0]] = ResolveConstant(node.inputs[0]);
      return absl::OkStatus();
    }
    TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
    TF_ASSIGN_OR_RETURN(input, buffers_.Plain(input));
    // Reshaped to 4-D (MaxViT's windows back to an image): a view, NCHW.
    TF_ASSIGN_OR_RETURN(TensorShape out, graph_.ShapeOf(node.outputs[0], &node));
    if (out.dims.size() == 4 && built_.plan.buffers[input].shape != out.dims) {
      input = buffers_.NewView(node.outputs[0], input, out.dims, 1, out.dims[3]);
    }
    buffers_.Bind(node.outputs[0], input);
    return absl::OkStatus();
  }

  [[nodiscard]] absl::Status AddTunedKernel(const GraphNode& node) {
    auto layer = layers_.find(node.name);
    if (layer == layers_.end()) {
      return NodeError(node,
                       "not a tuned operator shape (grouped convolution, transA, ...) "
                       "and no other implementation exists");
    }
    if (layer->second->workload == "batch_matmul") return AddBatchMatmul(node, *layer->second);
    if (node.op_type == "Conv") return AddConv(node, *layer->second);
    if (node.op_type == "MatMul" && node.inputs.size() == 2 && !IsConstant(node.inputs[1])) {
      return NodeError(node, "MatMul of two activations is not supported by compile yet");
    }
    return AddGemm(node, *layer->second);
  }

  [[nodiscard]] absl::Status AddNode(size_t index) {
    const GraphNode& node = graph_.nodes[index];
    const OperatorInfo* info = FindOperator(node.op_type);
    if (info == nullptr) return UnsupportedOperatorError(node);
    TF_RETURN_IF_ERROR(CheckAttributes(node, *info));
    if (node.outputs.empty()) return NodeError(node, "has no output");
    switch (info->lowering) {
      case OpLowering::kTunedKernel:
        return AddTunedKernel(node);
      case OpLowering::kPool:
        return AddPool(node);
      case OpLowering::kAdd: {
        const bool same_shape = node.inputs.size() == 2 && !IsConstant(node.inputs[0]) &&
                                !IsConstant(node.inputs[1]) &&
                                graph_.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims ==
                                    graph_.ShapeOf(node.inputs[1]).value_or(TensorShape()).dims;
        if (same_shape) return AddElementwise(node, *info);
        if (auto func = ChannelBinaryOf(graph_, node)) return AddChannelBinary(node, *func);
        TF_ASSIGN_OR_RETURN(LoweredTensorOp lowered, LowerTensorOp(graph_, node, info->lower));
        return AddTensorOp(node, std::move(lowered));
      }
      case OpLowering::kPointwise:
        return AddElementwise(node, *info);
      case OpLowering::kTensorOp: {
        if (IsSpatialMean(graph_, node)) return AddPool(node);
        if (IsNoOpPad(graph_, node)) {  // DenseNet's before each AveragePool: its input, any layout
          TF_ASSIGN_OR_RETURN(int input, Input(node, 0));
          buffers_.Bind(node.outputs[0], input);
          return absl::OkStatus();
        }
        if (node.op_type == "Concat") {
          TF_ASSIGN_OR_RETURN(bool blocked, AddBlockedConcat(node));
          if (blocked) return absl::OkStatus();
        }
        if (auto func = ChannelBinaryOf(graph_, node)) return AddChannelBinary(node, *func);
        if (auto map = ChannelGatherOf(graph_, node)) return AddChannelGather(node, *map);
        if (int d = ChannelsLastTransposeOf(graph_, node)) return AddChannelsLastTranspose(node, d);
        TF_ASSIGN_OR_RETURN(LoweredTensorOp lowered, LowerTensorOp(graph_, node, info->lower));
        if (lowered.step.op == StepOp::kBatchNorm &&
            graph_.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims.size() == 4) {
          return AddBatchNorm(node, std::move(lowered));
        }
        return AddTensorOp(node, std::move(lowered));
      }
      case OpLowering::kAlias:
        return AddAlias(node);
      case OpLowering::kSplit:
        return AddSplit(node);
      case OpLowering::kConstant:
        return NodeError(node, absl::StrCat("an input is computed at run time; compile folds ",
                                            node.op_type, " only when its inputs are constants"));
    }
    return UnsupportedOperatorError(node);
  }

  const Graph& graph_;
  const EpilogueFusion& fusion_;
  const ChooseKernelFn& choose_;
  std::map<std::string, const ModelLayer*> layers_;    // by node name
  std::map<std::string, std::string> constant_alias_;  // Identity of a constant -> it
  std::map<std::string, int> constant_buffers_;        // float constant -> its buffer
  std::map<std::string, size_t> kernel_by_key_;
  BuiltPlan built_;
  PlanBuffers buffers_{&built_.plan, &built_.weights};
};

}  // namespace

[[nodiscard]] absl::StatusOr<BuiltPlan> EmitPlan(const Graph& graph,
                                                 const std::vector<ModelLayer>& layers,
                                                 const EpilogueFusion& fusion,
                                                 const ChooseKernelFn& choose) {
  return PlanEmitter(graph, layers, fusion, choose).Build();
}

}  // namespace tunefleet
