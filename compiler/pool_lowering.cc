#include "compiler/pool_lowering.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "compiler/tensor_op_lowering.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {

std::vector<int64_t> PoolDims2d(std::vector<int64_t> dims) {
  if (dims.size() == 3) dims.insert(dims.begin() + 2, 1);
  return dims;
}

[[nodiscard]] absl::Status PoolWindowOf(const GraphNode& node, const std::vector<int64_t>& in,
                                        const std::vector<int64_t>& out, PlanStep& step) {
  if (in.size() < 3 || out.size() != in.size()) return NodeError(node, "input of rank below 3");
  const size_t spatial = in.size() - 2;
  std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape", {});
  std::vector<int64_t> strides = IntsAttribute(node, "strides", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> dilations =
      IntsAttribute(node, "dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads = IntsAttribute(node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    return NodeError(node, "kernel_shape, strides, dilations or pads do not fit the input");
  }
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET") {
    // SAME_*: the output is ceil(in / stride), the padding split evenly
    // with the odd one at the end (UPPER) or the beginning (LOWER).
    for (size_t d = 0; d < spatial; ++d) {
      const int64_t total =
          auto_pad == "VALID"
              ? 0
              : std::max<int64_t>(0, (out[2 + d] - 1) * strides[d] +
                                         (kernel[d] - 1) * dilations[d] + 1 - in[2 + d]);
      if (auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
        return NodeError(node, absl::StrCat("auto_pad '", auto_pad, "' is not supported"));
      }
      pads[d] = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
      pads[spatial + d] = total - pads[d];
    }
  }
  if (spatial == 1) {
    kernel.insert(kernel.begin(), 1);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  step.kernel_shape = kernel;
  step.strides = strides;
  step.pads = pads;
  if (dilations != std::vector<int64_t>{1, 1}) step.dilations = dilations;
  step.count_include_pad = IntAttribute(node, "count_include_pad", 0) != 0;
  return absl::OkStatus();
}

bool IsSpatialMean(const Graph& graph, const GraphNode& node) {
  if (node.op_type != "ReduceMean") return false;
  absl::StatusOr<TensorShape> in = graph.ShapeOf(node.inputs[0]);
  if (!in.ok() || in->dims.size() != 4) return false;
  absl::StatusOr<std::vector<int64_t>> axes = ReduceAxes(graph, node, in->dims);
  return axes.ok() && *axes == std::vector<int64_t>{2, 3};
}

[[nodiscard]] absl::StatusOr<PlanStep> PoolStepOf(const Graph& graph, const GraphNode& node) {
  TF_ASSIGN_OR_RETURN(TensorShape in, graph.ShapeOf(node.inputs[0], &node));
  TF_ASSIGN_OR_RETURN(TensorShape out, graph.ShapeOf(node.outputs[0], &node));
  const bool global = node.op_type == "GlobalAveragePool" || node.op_type == "ReduceMean";
  if (in.dims.size() != 4 && !(in.dims.size() == 3 && !global)) {
    return NodeError(
        node, absl::StrCat("only 1-D and 2-D pooling is supported (input ", in.ToString(), ")"));
  }
  if (node.outputs.size() > 1 && !node.outputs[1].empty()) {
    return NodeError(node, "MaxPool's Indices output is not supported");
  }
  PlanStep step;
  step.node = node.name;
  if (global) {
    step.op = StepOp::kGlobalAvgPool;
  } else {
    step.op = node.op_type == "MaxPool" ? StepOp::kMaxPool : StepOp::kAvgPool;
    TF_RETURN_IF_ERROR(PoolWindowOf(node, in.dims, out.dims, step));
  }
  step.in_shape = PoolDims2d(in.dims);
  // A mean not kept ([N, C]) is the same floats as [N, C, 1, 1].
  step.out_shape =
      global ? std::vector<int64_t>{in.dims[0], in.dims[1], 1, 1} : PoolDims2d(out.dims);
  return step;
}

}  // namespace tunefleet
