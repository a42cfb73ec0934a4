#include "compiler/passes/fuse_epilogues.h"

#include <algorithm>

#include "common/status_macros.h"
#include "compiler/operator_table.h"

namespace tunefleet {
namespace {

// A node whose output is its input's floats in the same order: a Reshape,
// Flatten, Squeeze, Unsqueeze or Identity, or a Transpose that moves only
// dims of 1 (an encoder's [S, 1, D] -> [1, S, D] around its attention).
bool KeepsElementOrder(const Graph& graph, const GraphNode& node) {
  const OperatorInfo* info = FindOperator(node.op_type);
  if (info == nullptr || node.inputs.empty() || node.outputs.empty()) return false;
  if (info->lowering == OpLowering::kAlias) return node.op_type != "Cast";
  if (node.op_type != "Transpose") return false;
  const std::vector<int64_t> dims = graph.ShapeOf(node.inputs[0]).value_or(TensorShape()).dims;
  const std::vector<int64_t> perm = IntsAttribute(node, "perm", {});
  if (perm.size() != dims.size()) return false;
  int64_t last = -1;
  for (const int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(dims.size())) return false;
    if (dims[axis] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

}  // namespace

[[nodiscard]] absl::StatusOr<EpilogueFusion> FuseEpilogues(
    const Graph& graph, const std::map<std::string, EpilogueKind>& kinds) {
  std::map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const std::string& input : graph.nodes[i].inputs) readers[input].push_back(i);
  }
  const std::set<std::string> graph_outputs(graph.outputs.begin(), graph.outputs.end());
  // The node that alone reads `tensor` (not a graph output), or -1.
  auto sole_reader = [&](const std::string& tensor) -> int {
    auto it = readers.find(tensor);
    if (graph_outputs.count(tensor) || it == readers.end() || it->second.size() != 1) return -1;
    return static_cast<int>(it->second[0]);
  };
  auto shape_of = [&](const std::string& tensor) {
    return graph.ShapeOf(tensor).value_or(TensorShape()).dims;
  };
  // When each tensor is ready: the index of the step that computes it (a
  // fused node's is its kernel's); graph inputs and constants before all.
  std::map<std::string, size_t> ready_at;
  EpilogueFusion fusion;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (fusion.fused_nodes.count(i)) continue;
    const GraphNode& kernel = graph.nodes[i];
    for (const std::string& output : kernel.outputs) ready_at[output] = i;
    auto kind = kinds.find(kernel.name);
    if (kind == kinds.end() || kernel.outputs.empty()) continue;
    FusedEpilogue e;
    e.output = kernel.outputs[0];
    std::vector<int64_t> out_shape = shape_of(e.output);
    const int64_t channels = out_shape.empty() ? 0 : out_shape.back();
    if (kernel.op_type == "Gemm" && kernel.inputs.size() > 2 && !kernel.inputs[2].empty()) {
      // A C that is not a row is added whole, as the epilogue's residual.
      auto c = graph.constants.find(kernel.inputs[2]);
      const int64_t size = c == graph.constants.end() ? 0 : c->second.shape.NumElements();
      if (size != 1 && size != channels) e.residual = kernel.inputs[2];
    }
    for (int next = sole_reader(e.output); kind->second != EpilogueKind::kNone && next >= 0;
         next = sole_reader(e.output)) {
      // A dense kernel's rows seen through views that keep their order and
      // their last dim, where a node to fuse follows them: the kernel
      // writes the view's tensor (the residual Add of an encoder whose
      // out-projection is reshaped and transposed back to [1, S, D]).
      std::vector<size_t> views;
      for (int v = next; kind->second == EpilogueKind::kRows && v >= 0 &&
                         KeepsElementOrder(graph, graph.nodes[v]) &&
                         !shape_of(graph.nodes[v].outputs[0]).empty() &&
                         shape_of(graph.nodes[v].outputs[0]).back() == channels;
           v = sole_reader(graph.nodes[v].outputs[0])) {
        views.push_back(static_cast<size_t>(v));
      }
      if (!views.empty()) {
        const std::string& viewed = graph.nodes[views.back()].outputs[0];
        const int after = sole_reader(viewed);
        const OperatorInfo* fusable =
            after < 0 ? nullptr : FindOperator(graph.nodes[after].op_type);
        if (fusable == nullptr || !fusable->fuses_into_epilogue ||
            graph.nodes[after].outputs.empty() ||
            shape_of(graph.nodes[after].outputs[0]) != shape_of(viewed)) {
          break;
        }
        for (const size_t v : views) fusion.fused_nodes.insert(v);
        e.output = viewed;
        out_shape = shape_of(viewed);
        ready_at[e.output] = i;
        next = after;
      }
      const GraphNode& node = graph.nodes[next];
      const OperatorInfo* info = FindOperator(node.op_type);
      if (info == nullptr || !info->fuses_into_epilogue || node.outputs.empty() ||
          shape_of(node.outputs[0]) != out_shape) {
        break;
      }
      if (info->lowering == OpLowering::kAdd) {
        if (kind->second == EpilogueKind::kActivation || node.inputs.size() != 2 ||
            !e.residual.empty() || !e.activation.empty())
          break;
        const std::string& other = node.inputs[0] == e.output ? node.inputs[1] : node.inputs[0];
        auto constant = graph.constants.find(other);
        if (constant != graph.constants.end()) {
          const bool row = kind->second == EpilogueKind::kRows &&
                           constant->second.shape.dtype == kOnnxFloat &&
                           static_cast<int64_t>(constant->second.f32.size()) == channels;
          if (!row) break;
          e.bias_rows.push_back(other);
        } else {
          const bool computed =
              graph.IsConstant(other) || ready_at.count(other) ||
              std::find(graph.inputs.begin(), graph.inputs.end(), other) != graph.inputs.end();
          if (!computed || shape_of(other) != out_shape) break;
          e.residual = other;
        }
      } else {
        if (!e.activation.empty()) break;
        TF_ASSIGN_OR_RETURN(e.activation, ActivationOf(graph, node, *info));
      }
      fusion.fused_nodes.insert(static_cast<size_t>(next));
      e.output = node.outputs[0];
      ready_at[e.output] = i;
    }
    fusion.by_kernel[kernel.name] = std::move(e);
  }
  return fusion;
}

}  // namespace tunefleet
