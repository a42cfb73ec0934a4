#include "tuner_core/graph/graph.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tunefleet {

int64_t TensorShape::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxTensorElements) {
      return kMaxTensorElements + 1;
    }
  }
  return n;
}

std::string TensorShape::ToString() const {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string WhereInferenceStops(const Graph& graph, std::string tensor, bool values) {
  auto known = [&](const std::string& t) {
    return graph.IsConstant(t) || (!values && graph.shapes.count(t) > 0);
  };
  for (size_t step = 0; step <= graph.nodes.size(); ++step) {
    const GraphNode* producer = nullptr;
    for (const GraphNode& node : graph.nodes) {
      for (const std::string& out : node.outputs) {
        if (out == tensor) producer = &node;
      }
    }
    if (producer == nullptr) return "";
    std::string unknown;
    for (size_t i = 0; i < producer->inputs.size() && unknown.empty(); ++i) {
      const std::string& in = producer->inputs[i];
      // Shape reads only its input's shape.
      const bool needed = !(values && producer->op_type == "Shape")
                              ? !known(in)
                              : graph.shapes.count(in) == 0 && !graph.IsConstant(in);
      if (!in.empty() && needed) unknown = in;
    }
    if (unknown.empty()) {
      std::vector<std::string> shapes;
      for (const std::string& in : producer->inputs) {
        auto it = graph.shapes.find(in);
        shapes.push_back(it != graph.shapes.end() ? it->second.ToString() : "-");
      }
      return absl::StrCat("; ", values ? "constant folding" : "shape inference", " stops at node '",
                          producer->name, "' (", producer->op_type, ", input shapes ",
                          absl::StrJoin(shapes, ", "), ")");
    }
    tensor = unknown;
  }
  return "";
}

absl::StatusOr<TensorShape> Graph::ShapeOf(const std::string& tensor, const GraphNode* user) const {
  auto it = shapes.find(tensor);
  if (it != shapes.end()) return it->second;
  return absl::InvalidArgumentError(absl::StrCat(
      "tensor '", tensor, "'",
      user == nullptr ? ""
                      : absl::StrCat(" (input of node '", user->name, "', ", user->op_type, ")"),
      " has no known shape after shape inference",
      WhereInferenceStops(*this, tensor, /*values=*/false)));
}

std::vector<int64_t> IntsAttribute(const GraphNode& node, const std::string& name,
                                   std::vector<int64_t> fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end() || !it->is_array()) return fallback;
  std::vector<int64_t> values;
  for (const nlohmann::json& v : *it) {
    if (!v.is_number_integer()) return fallback;
    values.push_back(v.get<int64_t>());
  }
  return values;
}

int64_t IntAttribute(const GraphNode& node, const std::string& name, int64_t fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

std::string StringAttribute(const GraphNode& node, const std::string& name, std::string fallback) {
  auto it = node.attributes.find(name);
  if (it == node.attributes.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

}  // namespace tunefleet
