#include "compiler/passes/lower_where.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "compiler/tensor_op_lowering.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

double ValueAt(const ConstantTensor& t, int64_t i) {
  return IsIntegerDtype(t.shape.dtype) ? static_cast<double>(t.i64[i]) : t.f32[i];
}

[[nodiscard]] absl::Status LowerWhere(Graph* graph, GraphNode* node) {
  const auto& constants = graph->constants;
  auto cond = constants.find(node->inputs[0]);
  const bool x_constant = graph->IsConstant(node->inputs[1]);
  if (cond == constants.end() || x_constant == graph->IsConstant(node->inputs[2])) {
    return absl::OkStatus();  // not this pattern: emit_plan says why
  }
  const ConstantTensor& fill_from = constants.at(node->inputs[x_constant ? 1 : 2]);
  if (fill_from.shape.dtype != kOnnxFloat) {
    return NodeError(*node, "only float32 values are supported");
  }
  std::optional<std::vector<int64_t>> dims =
      BroadcastShapes(cond->second.shape.dims, fill_from.shape.dims);
  if (!dims) return NodeError(*node, "the condition and the values do not broadcast");
  const std::vector<int64_t> at_cond = BroadcastIndices(cond->second.shape.dims, *dims);
  const std::vector<int64_t> at_value = BroadcastIndices(fill_from.shape.dims, *dims);
  ConstantTensor fill;
  fill.shape = {kOnnxFloat, *dims};
  fill.f32.resize(at_cond.size());
  for (size_t i = 0; i < at_cond.size(); ++i) {
    // The constant where the condition picks its side, else NaN.
    const bool picks_x = ValueAt(cond->second, at_cond[i]) != 0;
    const float value = fill_from.f32[at_value[i]];
    if (picks_x == x_constant && std::isnan(value)) {
      return NodeError(*node, "a NaN value is not supported where the other operand is computed");
    }
    fill.f32[i] = picks_x == x_constant ? value : std::numeric_limits<float>::quiet_NaN();
  }
  const std::string name = node->name + ".fill";
  graph->shapes[name] = fill.shape;
  graph->constants[name] = std::move(fill);
  node->op_type = kSelectOp;
  node->inputs = {node->inputs[x_constant ? 2 : 1], name};
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::Status LowerConstantWheres(Graph* graph) {
  for (GraphNode& node : graph->nodes) {
    if (node.op_type == "Where" && node.inputs.size() == 3 && node.outputs.size() == 1) {
      TF_RETURN_IF_ERROR(LowerWhere(graph, &node));
    }
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
