#include "tuner_core/graph/static_shapes.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {

[[nodiscard]] absl::Status NodeError(const GraphNode& node, const std::string& what) {
  return absl::InvalidArgumentError(
      absl::StrCat("node '", node.name, "' (", node.op_type, "): ", what));
}

[[nodiscard]] absl::StatusOr<std::vector<int64_t>> IntsInput(const Graph& graph,
                                                             const GraphNode& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i].empty()) return std::vector<int64_t>();
  auto it = graph.constants.find(node.inputs[i]);
  if (it == graph.constants.end() || !IsIntegerDtype(it->second.shape.dtype)) {
    return NodeError(node, absl::StrCat("input '", node.inputs[i],
                                        "' is not an integer constant (after constant "
                                        "folding)",
                                        WhereInferenceStops(graph, node.inputs[i], true)));
  }
  return it->second.i64;
}

[[nodiscard]] absl::StatusOr<int64_t> AxisOf(const GraphNode& node, int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return NodeError(node, "axis out of range");
  return axis;
}

std::optional<std::vector<int64_t>> BroadcastShapes(std::vector<int64_t> a,
                                                    std::vector<int64_t> b) {
  if (a.size() < b.size()) std::swap(a, b);
  const size_t shift = a.size() - b.size();
  for (size_t d = 0; d < b.size(); ++d) {
    int64_t& dim = a[d + shift];
    if (dim == 1) {
      dim = b[d];
    } else if (b[d] != 1 && b[d] != dim) {
      return std::nullopt;
    }
  }
  return a;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

std::vector<int64_t> BroadcastIndices(const std::vector<int64_t>& dims,
                                      const std::vector<int64_t>& out) {
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const size_t shift = out.size() - dims.size();
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<int64_t> index(total);
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, at = 0;
    for (size_t d = out.size(); d-- > 0;) {
      const int64_t coordinate = rest % out[d];
      rest /= out[d];
      if (d >= shift && dims[d - shift] != 1) at += coordinate * strides[d - shift];
    }
    index[i] = at;
  }
  return index;
}

[[nodiscard]] absl::StatusOr<SliceWindow> SliceWindowOf(const Graph& graph, const GraphNode& node,
                                                        const std::vector<int64_t>& in) {
  std::vector<int64_t> starts = IntsAttribute(node, "starts", {});
  std::vector<int64_t> ends = IntsAttribute(node, "ends", {});
  std::vector<int64_t> axes = IntsAttribute(node, "axes", {});
  std::vector<int64_t> steps;
  if (node.inputs.size() > 1) {  // opset 10 on: bounds are inputs
    TF_ASSIGN_OR_RETURN(starts, IntsInput(graph, node, 1));
    TF_ASSIGN_OR_RETURN(ends, IntsInput(graph, node, 2));
    TF_ASSIGN_OR_RETURN(axes, IntsInput(graph, node, 3));
    TF_ASSIGN_OR_RETURN(steps, IntsInput(graph, node, 4));
  }
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size())) {
    return NodeError(node, "starts, ends, axes and steps differ in length");
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  SliceWindow window;
  window.out_shape = in;
  window.strides = RowMajorStrides(in);
  const std::vector<int64_t> strides = window.strides;
  for (size_t i = 0; i < starts.size(); ++i) {
    TF_ASSIGN_OR_RETURN(const int64_t axis,
                        AxisOf(node, axes.empty() ? static_cast<int64_t>(i) : axes[i], rank));
    const int64_t dim = in[axis], stride = steps.empty() ? 1 : steps[i];
    if (stride == 0) return NodeError(node, "step 0");
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (stride > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t count = stride > 0 ? std::max<int64_t>(0, (end - start + stride - 1) / stride)
                                     : std::max<int64_t>(0, (start - end - stride - 1) / -stride);
    window.out_shape[axis] = count;
    window.offset += start * strides[axis];
    window.strides[axis] = strides[axis] * stride;
  }
  return window;
}

[[nodiscard]] absl::StatusOr<std::vector<int64_t>> PadsOf(const Graph& graph, const GraphNode& node,
                                                          int64_t rank) {
  std::vector<int64_t> pads = IntsAttribute(node, "pads", {});
  if (node.inputs.size() > 1 && !node.inputs[1].empty()) {
    TF_ASSIGN_OR_RETURN(pads, IntsInput(graph, node, 1));
  }
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, IntsInput(graph, node, 3));
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    return NodeError(node, absl::StrCat(pads.size(), " pads for ", axes.size(), " axes"));
  }
  std::vector<int64_t> all(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    TF_ASSIGN_OR_RETURN(const int64_t axis, AxisOf(node, axes[i], rank));
    all[axis] = pads[i];
    all[rank + axis] = pads[axes.size() + i];
  }
  return all;
}

[[nodiscard]] absl::StatusOr<ResizeShape> ResizeShapeOf(const Graph& graph, const GraphNode& node,
                                                        const std::vector<int64_t>& in) {
  // Opset 10: X, scales; opset 11 on: X, roi, scales, sizes.
  const size_t scales_at = node.inputs.size() == 2 ? 1 : 2;
  const size_t rank = in.size();
  ResizeShape shape;
  if (node.inputs.size() > 3 && !node.inputs[3].empty()) {
    TF_ASSIGN_OR_RETURN(shape.out, IntsInput(graph, node, 3));
    if (shape.out.size() != rank) return NodeError(node, "sizes not of the input's rank");
    for (size_t d = 0; d < rank; ++d) {
      if (shape.out[d] < 1 || in[d] < 1) return NodeError(node, "sizes below 1");
      shape.scales.push_back(static_cast<float>(shape.out[d]) / static_cast<float>(in[d]));
    }
    return shape;
  }
  auto scales = graph.constants.find(scales_at < node.inputs.size() ? node.inputs[scales_at] : "");
  if (scales == graph.constants.end() || scales->second.shape.dtype != kOnnxFloat ||
      scales->second.f32.size() != rank) {
    return NodeError(node, "needs constant scales or sizes of the input's rank");
  }
  shape.scales = scales->second.f32;
  for (size_t d = 0; d < rank; ++d) {
    if (!(shape.scales[d] > 0)) return NodeError(node, "scales must be positive");
    shape.out.push_back(static_cast<int64_t>(
        std::floor(static_cast<double>(in[d]) * static_cast<double>(shape.scales[d]))));
    if (shape.out[d] < 1) return NodeError(node, "an output axis of size 0");
  }
  return shape;
}

}  // namespace tunefleet
