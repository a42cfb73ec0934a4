// Resize (opset 10 on) as a kResize step: per output position of each axis
// its taps (source positions and weights), worked out here from the node's
// mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a and
// exclude_outside as ONNX's reference computes them. Nearest, linear and
// cubic, every coordinate mode (tf_crop_and_resize with a constant roi);
// antialias and axes (opset 18) are refused by name.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "compiler/tensor_op_lowering.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// What Resize reads for one output position of one axis: the source
// coordinate per coordinate_transformation_mode, or nullopt outside a crop.
// The resized length is in * scale, not rounded (ONNX's reference: with
// scales 0.6 an axis of 4 has 2 outputs, the second at 3 / 1.4).
std::optional<double> SourceCoordinate(const std::string& mode, int64_t o, int64_t in, double scale,
                                       double roi_start, double roi_end) {
  const double resized = static_cast<double>(in) * scale;
  if (mode == "align_corners") return resized == 1 ? 0.0 : o * (in - 1.0) / (resized - 1.0);
  if (mode == "asymmetric") return o / scale;
  if (mode == "tf_half_pixel_for_nn") return (o + 0.5) / scale;
  if (mode == "pytorch_half_pixel" && resized == 1) return -0.5;
  if (mode == "tf_crop_and_resize") {
    const double span = (roi_end - roi_start) * (in - 1.0);
    const double x = roi_start * (in - 1.0) + (resized == 1 ? span / 2 : o * span / (resized - 1));
    if (x < 0 || x > in - 1.0) return std::nullopt;
    return x;
  }
  return (o + 0.5) / scale - 0.5;  // half_pixel, pytorch_half_pixel
}

// The interpolation weights of ratio r in (0, 1] (r = 1: on a source
// position): 2 for nearest and linear, 4 for cubic.
std::vector<double> Coefficients(const std::string& mode, const std::string& nearest, double r,
                                 double a) {
  if (mode == "linear") return {1 - r, r};
  if (mode == "cubic") {
    const double s = 1 - r;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  bool second = r > 0.5;  // round_prefer_floor
  if (r == 1 || nearest == "ceil") second = true;
  if (nearest == "floor" && r != 1) second = false;
  if (nearest == "round_prefer_ceil" && r != 1) second = r >= 0.5;
  return {second ? 0.0 : 1.0, second ? 1.0 : 0.0};
}

[[nodiscard]] absl::Status LowerResize(const Graph& graph, const GraphNode& node,
                                       const TensorShape& in, const TensorShape& out,
                                       LoweredTensorOp& lowered) {
  const std::string mode = StringAttribute(node, "mode", "nearest");
  const std::string coordinates =
      StringAttribute(node, "coordinate_transformation_mode", "half_pixel");
  const std::string nearest = StringAttribute(node, "nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") {
    return NodeError(node, absl::StrCat("mode '", mode, "' is not supported"));
  }
  if (coordinates != "half_pixel" && coordinates != "pytorch_half_pixel" &&
      coordinates != "align_corners" && coordinates != "asymmetric" &&
      coordinates != "tf_half_pixel_for_nn" && coordinates != "tf_crop_and_resize") {
    return NodeError(
        node, absl::StrCat("coordinate_transformation_mode '", coordinates, "' is not supported"));
  }
  if (nearest != "round_prefer_floor" && nearest != "round_prefer_ceil" && nearest != "floor" &&
      nearest != "ceil") {
    return NodeError(node, absl::StrCat("nearest_mode '", nearest, "' is not supported"));
  }
  if (IntAttribute(node, "antialias", 0) != 0) return NodeError(node, "antialias is not supported");
  if (node.attributes.contains("axes")) return NodeError(node, "axes is not supported");
  if (StringAttribute(node, "keep_aspect_ratio_policy", "stretch") != "stretch") {
    return NodeError(node, "keep_aspect_ratio_policy other than stretch is not supported");
  }
  const size_t rank = in.dims.size();
  std::vector<float> roi(2 * rank, 0.0f);
  if (coordinates == "tf_crop_and_resize") {
    auto it = graph.constants.find(node.inputs.size() > 1 ? node.inputs[1] : "");
    if (it == graph.constants.end() || it->second.f32.size() != 2 * rank) {
      return NodeError(node, "tf_crop_and_resize needs a constant float roi of twice the rank");
    }
    roi = it->second.f32;
  }
  TF_ASSIGN_OR_RETURN(ResizeShape shape, ResizeShapeOf(graph, node, in.dims));
  if (shape.out != out.dims) return NodeError(node, "output shape disagrees with shape inference");
  const double a = node.attributes.value("cubic_coeff_a", -0.75);
  const bool exclude_outside = IntAttribute(node, "exclude_outside", 0) != 0;
  PlanStep& step = lowered.step;
  step.op = StepOp::kResize;
  step.in_shape = in.dims;
  step.out_shape = out.dims;
  step.alpha = node.attributes.value("extrapolation_value", 0.0f);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t n = in.dims[d];
    for (int64_t o = 0; o < out.dims[d]; ++o) {
      const std::optional<double> x =
          SourceCoordinate(coordinates, o, n, shape.scales[d], roi[d], roi[rank + d]);
      const int64_t taps = mode == "cubic" ? 4 : 2;
      if (!x) {
        step.indices.insert(step.indices.end(), taps, -1);
        step.weights.insert(step.weights.end(), taps, 0.0f);
        continue;
      }
      // Ratio in (0, 1]: on a source position the taps end there.
      const double below = std::floor(*x);
      const bool exact = *x == below;
      const double r = exact ? 1.0 : *x - below;
      const int64_t last_below = static_cast<int64_t>(exact ? below - 1 : below);
      std::vector<double> w = Coefficients(mode, nearest, r, a);
      const int64_t start = last_below - (taps / 2 - 1);
      if (exclude_outside) {
        double sum = 0;
        for (int64_t k = 0; k < taps; ++k) {
          if (start + k < 0 || start + k >= n) w[k] = 0;
          sum += w[k];
        }
        for (double& v : w) v = sum != 0 ? v / sum : 0;
      }
      for (int64_t k = 0; k < taps; ++k) {  // outside the axis: its edge (ONNX pads so)
        step.indices.push_back(std::min<int64_t>(std::max<int64_t>(start + k, 0), n - 1));
        step.weights.push_back(static_cast<float>(w[k]));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

const TensorOpLowering kLowerResize = &LowerResize;

}  // namespace tunefleet
