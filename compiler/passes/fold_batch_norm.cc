#include "compiler/passes/fold_batch_norm.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/passes/graph_rewrite.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {

[[nodiscard]] absl::Status FoldBatchNorm(Graph* graph) {
  std::map<std::string, int> readers;
  for (const GraphNode& node : graph->nodes) {
    for (const std::string& input : node.inputs) ++readers[input];
  }
  for (const std::string& output : graph->outputs) ++readers[output];
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    for (const std::string& output : graph->nodes[i].outputs) producer[output] = i;
  }
  std::set<size_t> removed;
  for (size_t b = 0; b < graph->nodes.size(); ++b) {
    const GraphNode& bn = graph->nodes[b];
    if (bn.op_type != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.empty() ||
        IntAttribute(bn, "training_mode", 0) != 0) {
      continue;
    }
    auto conv_it = producer.find(bn.inputs[0]);
    if (conv_it == producer.end() || readers[bn.inputs[0]] != 1) continue;
    GraphNode& conv = graph->nodes[conv_it->second];
    if (conv.op_type != "Conv" || conv.inputs.size() < 2) continue;
    const ConstantTensor* weight = FloatConstant(*graph, conv.inputs[1]);
    const ConstantTensor* bias = conv.inputs.size() > 2 && !conv.inputs[2].empty()
                                     ? FloatConstant(*graph, conv.inputs[2])
                                     : nullptr;
    if (weight == nullptr || (conv.inputs.size() > 2 && !conv.inputs[2].empty() && !bias)) {
      continue;
    }
    std::vector<const ConstantTensor*> params;
    for (size_t i = 1; i < 5; ++i) params.push_back(FloatConstant(*graph, bn.inputs[i]));
    if (std::count(params.begin(), params.end(), nullptr) > 0) continue;
    const int64_t k = weight->shape.dims.empty() ? 0 : weight->shape.dims[0];
    for (const ConstantTensor* p : params) {
      if (static_cast<int64_t>(p->f32.size()) != k) {
        return NodeError(bn, absl::StrCat("a per-channel input has ", p->f32.size(),
                                          " values; the Conv before it has ", k, " channels"));
      }
    }
    if (bias != nullptr && static_cast<int64_t>(bias->f32.size()) != k) {
      return NodeError(conv, "bias does not hold one value per output channel");
    }
    const double eps = bn.attributes.value("epsilon", 1e-5);
    ConstantTensor new_weight = *weight, new_bias;
    new_bias.shape = {kOnnxFloat, {k}};
    new_bias.f32.assign(k, 0.0f);
    const int64_t per_k = k > 0 ? static_cast<int64_t>(weight->f32.size()) / k : 0;
    const auto &scale = params[0]->f32, &beta = params[1]->f32, &mean = params[2]->f32,
               &var = params[3]->f32;
    for (int64_t c = 0; c < k; ++c) {
      const double s = scale[c] / std::sqrt(static_cast<double>(var[c]) + eps);
      for (int64_t i = 0; i < per_k; ++i) {
        new_weight.f32[c * per_k + i] = static_cast<float>(weight->f32[c * per_k + i] * s);
      }
      const double b0 = bias != nullptr ? bias->f32[c] : 0.0;
      new_bias.f32[c] = static_cast<float>((b0 - mean[c]) * s + beta[c]);
    }
    conv.inputs.resize(3);
    conv.inputs[1] =
        AddConstant(graph, absl::StrCat(conv.name, ".bn_folded_weight"), std::move(new_weight));
    conv.inputs[2] =
        AddConstant(graph, absl::StrCat(conv.name, ".bn_folded_bias"), std::move(new_bias));
    conv.outputs[0] = bn.outputs[0];
    removed.insert(b);
  }
  EraseNodes(graph, removed);
  return absl::OkStatus();
}

}  // namespace tunefleet
