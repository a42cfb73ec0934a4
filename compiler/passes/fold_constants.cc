#include "compiler/passes/fold_constants.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

[[nodiscard]] absl::Status FoldError(const GraphNode& node, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name, "' (", node.op_type, "): ", what));
}

// A constant's values as doubles (int64 values are exact below 2^53, far
// beyond any shape), and back.
std::vector<double> Values(const ConstantTensor& t) {
  if (t.shape.dtype == kOnnxInt64) return std::vector<double>(t.i64.begin(), t.i64.end());
  return std::vector<double>(t.f32.begin(), t.f32.end());
}

ConstantTensor Make(int dtype, std::vector<int64_t> dims, const std::vector<double>& values) {
  ConstantTensor t;
  t.shape.dtype = dtype;
  t.shape.dims = std::move(dims);
  for (double v : values) {
    if (dtype == kOnnxInt64) {
      t.i64.push_back(static_cast<int64_t>(v));
    } else {
      t.f32.push_back(static_cast<float>(v));
    }
  }
  return t;
}

// The folded output of `node` (all of whose inputs are constants, except
// Shape's), or nullopt when the node is not one this pass folds.
[[nodiscard]] absl::StatusOr<std::optional<ConstantTensor>> Fold(const Graph& graph,
                                                                 const GraphNode& node) {
  const std::string& op = node.op_type;
  auto input = [&](size_t i) -> const ConstantTensor& {
    return graph.constants.at(node.inputs[i]);
  };
  // The output's shape as shape inference found it (ONNX shapes are static here).
  std::vector<int64_t> out_dims;
  if (auto it = graph.shapes.find(node.outputs[0]); it != graph.shapes.end()) {
    out_dims = it->second.dims;
  }
  if (op == "Shape") {
    TF_ASSIGN_OR_RETURN(TensorShape shape, graph.ShapeOf(node.inputs[0], &node));
    const int64_t rank = static_cast<int64_t>(shape.dims.size());
    int64_t start = IntAttribute(node, "start", 0), end = IntAttribute(node, "end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<double> dims(shape.dims.begin() + start, shape.dims.begin() + end);
    return Make(kOnnxInt64, {end - start}, dims);
  }
  if (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" ||
      op == "Flatten") {
    ConstantTensor t = input(0);
    t.shape.dims = out_dims;
    if (t.shape.NumElements() != input(0).shape.NumElements()) {
      return FoldError(node, "output shape unknown or of another size");
    }
    return t;
  }
  if (op == "Cast") {
    const int64_t to = IntAttribute(node, "to", 0);
    if (to != kOnnxFloat && to != kOnnxInt64) return std::optional<ConstantTensor>();
    return Make(static_cast<int>(to), input(0).shape.dims, Values(input(0)));
  }
  if (op == "Gather") {
    const ConstantTensor& data = input(0);
    const std::vector<double> indices = Values(input(1));
    if (data.shape.dims.size() != 1 || IntAttribute(node, "axis", 0) != 0) {
      return std::optional<ConstantTensor>();  // only 1-D data (shapes) is folded
    }
    const std::vector<double> values = Values(data);
    const int64_t n = static_cast<int64_t>(values.size());
    std::vector<double> out;
    for (double v : indices) {
      int64_t i = static_cast<int64_t>(v);
      if (i < 0) i += n;
      if (i < 0 || i >= n) return FoldError(node, absl::StrCat("index ", v, " out of range"));
      out.push_back(values[i]);
    }
    return Make(data.shape.dtype, input(1).shape.dims, out);
  }
  if (op == "Concat") {
    std::vector<double> out;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (input(i).shape.dims.size() > 1) return std::optional<ConstantTensor>();
      for (double v : Values(input(i))) out.push_back(v);
    }
    return Make(input(0).shape.dtype, {static_cast<int64_t>(out.size())}, out);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    const std::vector<double> a = Values(input(0)), b = Values(input(1));
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1) {
      return std::optional<ConstantTensor>();  // general broadcasting: left to the runtime
    }
    const int dtype = input(0).shape.dtype;
    const size_t n = std::max(a.size(), b.size());
    std::vector<double> out(n);
    for (size_t i = 0; i < n; ++i) {
      const double x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
      if (op == "Div" && dtype == kOnnxInt64 && y == 0) return FoldError(node, "divides by 0");
      out[i] = op == "Add"   ? x + y
               : op == "Sub" ? x - y
               : op == "Mul" ? x * y
               : dtype == kOnnxInt64
                   ? static_cast<double>(static_cast<int64_t>(x) / static_cast<int64_t>(y))
                   : x / y;
    }
    std::vector<int64_t> dims = out_dims;
    if (dims.empty() && n > 1) dims = {static_cast<int64_t>(n)};
    return Make(dtype, dims, out);
  }
  return std::optional<ConstantTensor>();
}

}  // namespace

[[nodiscard]] absl::StatusOr<Graph> FoldConstants(Graph graph) {
  std::vector<GraphNode> kept;
  for (GraphNode& node : graph.nodes) {
    bool all_constant = !node.inputs.empty() && node.outputs.size() == 1;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const bool shape_only = node.op_type == "Shape" && i == 0;
      if (node.inputs[i].empty() || (!shape_only && !graph.IsConstant(node.inputs[i]))) {
        all_constant = false;
      }
    }
    if (all_constant) {
      TF_ASSIGN_OR_RETURN(std::optional<ConstantTensor> folded, Fold(graph, node));
      if (folded) {
        graph.shapes[node.outputs[0]] = folded->shape;
        graph.constants[node.outputs[0]] = std::move(*folded);
        continue;
      }
    }
    kept.push_back(std::move(node));
  }
  graph.nodes = std::move(kept);
  return graph;
}

}  // namespace tunefleet
