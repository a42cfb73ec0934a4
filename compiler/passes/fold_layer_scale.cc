#include "compiler/passes/fold_layer_scale.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/passes/graph_rewrite.h"

namespace tunefleet {
namespace {

// The axis of a rank-`rank` tensor that `gamma` (broadcast from the right)
// scales: its one dimension above 1; `rank` - 1 when it holds one value;
// -1 when it scales more than one axis or has a higher rank.
int ScaledAxis(const ConstantTensor& gamma, int rank) {
  const std::vector<int64_t>& dims = gamma.shape.dims;
  if (static_cast<int>(dims.size()) > rank) return -1;
  int axis = rank - 1;
  int above_one = 0;
  for (size_t j = 0; j < dims.size(); ++j) {
    if (dims[j] != 1) {
      ++above_one;
      axis = rank - static_cast<int>(dims.size()) + static_cast<int>(j);
    }
  }
  return above_one <= 1 ? axis : -1;
}

}  // namespace

int FoldLayerScale(Graph* graph) {
  std::map<std::string, int> readers;
  for (const GraphNode& node : graph->nodes) {
    for (const std::string& input : node.inputs) ++readers[input];
  }
  for (const std::string& output : graph->outputs) readers[output] += 2;  // never folded away
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    for (const std::string& output : graph->nodes[i].outputs) producer[output] = i;
  }
  // The node producing `tensor` where `tensor` has one reader, or null.
  auto only_reader_of = [&](const std::string& tensor) -> GraphNode* {
    auto it = producer.find(tensor);
    if (it == producer.end() || readers[tensor] != 1) return nullptr;
    return &graph->nodes[it->second];
  };
  std::set<size_t> removed;
  for (size_t m = 0; m < graph->nodes.size(); ++m) {
    const GraphNode& mul = graph->nodes[m];
    if (mul.op_type != "Mul" || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    const int g = FloatConstant(*graph, mul.inputs[0]) != nullptr ? 0 : 1;
    const ConstantTensor* gamma = FloatConstant(*graph, mul.inputs[g]);
    const std::string& scaled = mul.inputs[1 - g];
    auto shape = graph->shapes.find(mul.outputs[0]);
    if (gamma == nullptr || graph->IsConstant(scaled) || shape == graph->shapes.end()) continue;
    const int rank = static_cast<int>(shape->second.dims.size());
    const int axis = ScaledAxis(*gamma, rank);
    GraphNode* node = only_reader_of(scaled);
    if (axis < 0 || node == nullptr) continue;
    GraphNode* transpose = nullptr;
    if (node->op_type == "Transpose" && node->inputs.size() == 1) {
      std::vector<int64_t> reversed;
      for (int d = rank - 1; d >= 0; --d) reversed.push_back(d);
      const std::vector<int64_t> perm = IntsAttribute(*node, "perm", reversed);
      if (static_cast<int>(perm.size()) != rank || perm[axis] != rank - 1) continue;
      transpose = node;
      node = only_reader_of(node->inputs[0]);
    } else if (axis != rank - 1) {
      continue;
    }
    if (node == nullptr) continue;
    GraphNode* add = nullptr;
    const ConstantTensor* bias = nullptr;
    int bias_input = -1;
    if (node->op_type == "Add" && node->inputs.size() == 2) {
      bias_input = FloatConstant(*graph, node->inputs[0]) != nullptr ? 0 : 1;
      bias = FloatConstant(*graph, node->inputs[bias_input]);
      if (bias == nullptr) continue;
      add = node;
      node = only_reader_of(node->inputs[1 - bias_input]);
      if (node == nullptr) continue;
    }
    GraphNode& matmul = *node;
    const ConstantTensor* weight = matmul.op_type == "MatMul" && matmul.inputs.size() == 2
                                       ? FloatConstant(*graph, matmul.inputs[1])
                                       : nullptr;
    if (weight == nullptr || weight->shape.dims.size() != 2) continue;
    const int64_t rows = weight->shape.dims[0], n = weight->shape.dims[1];
    const int64_t scales = static_cast<int64_t>(gamma->f32.size());
    if ((scales != n && scales != 1) || static_cast<int64_t>(weight->f32.size()) != rows * n ||
        (bias != nullptr && (bias->shape.dims.size() != 1 || bias->shape.dims[0] != n ||
                             static_cast<int64_t>(bias->f32.size()) != n))) {
      continue;
    }
    auto scale_of = [&](int64_t column) { return gamma->f32[scales == 1 ? 0 : column]; };
    ConstantTensor new_weight = *weight;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t c = 0; c < n; ++c) new_weight.f32[i * n + c] *= scale_of(c);
    }
    matmul.inputs[1] =
        AddConstant(graph, matmul.name + ".layer_scaled_weight", std::move(new_weight));
    if (add != nullptr) {
      ConstantTensor new_bias = *bias;
      for (int64_t c = 0; c < n; ++c) new_bias.f32[c] *= scale_of(c);
      add->inputs[bias_input] =
          AddConstant(graph, add->name + ".layer_scaled_bias", std::move(new_bias));
    }
    // The last node of the chain writes the Mul's output in its place.
    GraphNode& last = transpose != nullptr ? *transpose : add != nullptr ? *add : matmul;
    last.outputs[0] = mul.outputs[0];
    removed.insert(m);
  }
  EraseNodes(graph, removed);
  return static_cast<int>(removed.size());
}

}  // namespace tunefleet
