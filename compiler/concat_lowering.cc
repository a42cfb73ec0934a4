// The blocked channel Concat (tensor_op_lowering.h LowerBlockedConcat) and
// the block it joins its inputs in (ConcatBlock).
#include <numeric>
#include <optional>
#include <vector>

#include "common/status_macros.h"
#include "compiler/tensor_op_lowering.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {

int64_t ConcatBlock(const std::vector<ConcatPart>& parts) {
  std::vector<int64_t> candidates;
  for (const ConcatPart& part : parts) {
    candidates.push_back(part.block);
    int64_t common = part.block;
    for (const ConcatPart& other : parts) common = std::gcd(common, other.channels);
    if (common % 4 == 0) candidates.push_back(common);
  }
  int64_t best = 1, best_moved = 0;
  for (const int64_t block : candidates) {
    if (block <= 1) continue;
    int64_t moved = 0;
    bool divides = true;
    for (const ConcatPart& part : parts) {
      divides &= part.channels % block == 0;
      if (part.block != block) moved += part.elements;
    }
    if (!divides) continue;
    if (best == 1 || moved < best_moved || (moved == best_moved && block > best)) {
      best = block;
      best_moved = moved;
    }
  }
  return best;
}

[[nodiscard]] absl::StatusOr<std::optional<LoweredTensorOp>> LowerBlockedConcat(
    const Graph& graph, const GraphNode& node, int64_t block) {
  TF_ASSIGN_OR_RETURN(TensorShape out, graph.ShapeOf(node.outputs[0], &node));
  const int64_t axis = IntAttribute(node, "axis", 0);
  if (block <= 1 || out.dims.size() != 4 || (axis != 1 && axis != -3)) return std::nullopt;
  LoweredTensorOp lowered;
  PlanStep& step = lowered.step;
  step.op = StepOp::kConcat;
  step.node = node.name;
  step.out_shape = out.dims;
  // [outer: N, inner: H * W * block, each input's channel blocks].
  step.in_shape = {out.dims[0], out.dims[2] * out.dims[3] * block};
  for (const std::string& input : node.inputs) {
    TF_ASSIGN_OR_RETURN(TensorShape s, graph.ShapeOf(input, &node));
    if (s.dims.size() != 4 || s.dtype != kOnnxFloat || s.dims[1] % block != 0 ||
        s.dims[0] != out.dims[0] || s.dims[2] != out.dims[2] || s.dims[3] != out.dims[3]) {
      return std::nullopt;
    }
    step.in_shape.push_back(s.dims[1] / block);
    lowered.operands.push_back(input);
  }
  return std::optional<LoweredTensorOp>(std::move(lowered));
}

}  // namespace tunefleet
