#include "compiler/passes/graph_rewrite.h"

#include <utility>
#include <vector>

namespace tunefleet {

const ConstantTensor* FloatConstant(const Graph& graph, const std::string& tensor) {
  auto it = graph.constants.find(tensor);
  if (it == graph.constants.end() || it->second.shape.dtype != kOnnxFloat) return nullptr;
  return &it->second;
}

std::string AddConstant(Graph* graph, const std::string& name, ConstantTensor tensor) {
  graph->shapes[name] = tensor.shape;
  graph->constants[name] = std::move(tensor);
  return name;
}

void EraseNodes(Graph* graph, const std::set<size_t>& removed) {
  std::vector<GraphNode> kept;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    if (!removed.count(i)) kept.push_back(std::move(graph->nodes[i]));
  }
  graph->nodes = std::move(kept);
}

}  // namespace tunefleet
