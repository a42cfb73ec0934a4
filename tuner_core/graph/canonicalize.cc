#include "tuner_core/graph/canonicalize.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {

[[nodiscard]] absl::Status Canonicalize(Graph* graph) {
  std::vector<GraphNode> nodes;
  nodes.reserve(graph->nodes.size());
  for (GraphNode& node : graph->nodes) {
    const std::string& op = node.op_type;
    if (op == "Max" || op == "Min" || op == "Sum") {
      if (node.inputs.empty()) return NodeError(node, "has no input");
      std::string acc = node.inputs[0];
      for (size_t i = 1; i + 1 < node.inputs.size(); ++i) {
        GraphNode part{absl::StrCat(node.name, ".part", i),
                       op,
                       {acc, node.inputs[i]},
                       {absl::StrCat(node.name, ".part", i, "_output")}};
        acc = part.outputs[0];
        nodes.push_back(std::move(part));
      }
      if (node.inputs.size() > 2) node.inputs = {acc, node.inputs.back()};
    }
    if (op == "Gemm" && IntAttribute(node, "transA", 0) != 0 && !node.inputs.empty()) {
      GraphNode transpose{
          node.name + ".A_t", "Transpose", {node.inputs[0]}, {node.name + ".A_t_output"}};
      transpose.attributes["perm"] = {1, 0};
      node.inputs[0] = transpose.outputs[0];
      node.attributes.erase("transA");
      nodes.push_back(std::move(transpose));
    }
    nodes.push_back(std::move(node));
  }
  graph->nodes = std::move(nodes);
  return absl::OkStatus();
}

}  // namespace tunefleet
