#include "tuner_core/graph/task_extraction.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

// A node is either a layer or a reason it is not one.
struct Mapped {
  bool tuned = false;
  ModelLayer layer;
  std::string reason;
};

Mapped NotTuned(std::string reason) { return {false, {}, std::move(reason)}; }

[[nodiscard]] absl::Status RequireFloat(const TensorShape& shape, const GraphNode& node,
                                        const std::string& what) {
  if (shape.dtype != kOnnxFloat) {
    return absl::InvalidArgumentError(absl::StrCat("node '", node.name, "' (", node.op_type,
                                                   "): ", what, " has element type ", shape.dtype,
                                                   ", only float32 is tuned"));
  }
  return absl::OkStatus();
}

// Padding of one spatial axis for auto_pad SAME_UPPER / SAME_LOWER.
std::pair<int64_t, int64_t> SamePadding(int64_t in, int64_t kernel, int64_t stride,
                                        int64_t dilation, bool upper) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + (kernel - 1) * dilation + 1 - in);
  const int64_t small = total / 2, large = total - small;
  return upper ? std::make_pair(small, large) : std::make_pair(large, small);
}

[[nodiscard]] absl::StatusOr<Mapped> MapConv(const Graph& graph, const GraphNode& node) {
  if (node.inputs.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Conv node '", node.name, "' has no weight input"));
  }
  TF_ASSIGN_OR_RETURN(TensorShape x, graph.ShapeOf(node.inputs[0], &node));
  TF_ASSIGN_OR_RETURN(TensorShape w, graph.ShapeOf(node.inputs[1], &node));
  if (x.dims.size() != 4 || w.dims.size() != 4) {
    return NotTuned(absl::StrCat("convolution over ", x.dims.size() - 2,
                                 " spatial dimensions (only 2-D is tuned)"));
  }
  TF_RETURN_IF_ERROR(RequireFloat(x, node, "input"));
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], wd = x.dims[3];
  const int64_t k = w.dims[0], r = w.dims[2], s = w.dims[3];
  const int64_t group = IntAttribute(node, "group", 1);
  const std::vector<int64_t> strides = IntsAttribute(node, "strides", {1, 1});
  const std::vector<int64_t> dilations = IntsAttribute(node, "dilations", {1, 1});
  std::vector<int64_t> pads = IntsAttribute(node, "pads", {0, 0, 0, 0});
  if (strides.size() != 2 || dilations.size() != 2 || pads.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Conv node '", node.name, "': strides, dilations or pads do not fit a 2-D convolution"));
  }
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    const bool upper = auto_pad == "SAME_UPPER";
    auto [top, bottom] = SamePadding(h, r, strides[0], dilations[0], upper);
    auto [left, right] = SamePadding(wd, s, strides[1], dilations[1], upper);
    pads = {top, left, bottom, right};
  } else if (auto_pad == "VALID") {
    pads = {0, 0, 0, 0};
  }
  nlohmann::json args = {{"N", n},
                         {"C", c},
                         {"H", h},
                         {"W", wd},
                         {"R", r},
                         {"S", s},
                         {"stride_h", strides[0]},
                         {"stride_w", strides[1]},
                         {"pad_top", pads[0]},
                         {"pad_left", pads[1]},
                         {"pad_bottom", pads[2]},
                         {"pad_right", pads[3]},
                         {"dil_h", dilations[0]},
                         {"dil_w", dilations[1]},
                         {"layout", "NCHWc"}};
  if (group == 1) {
    args["K"] = k;
    return Mapped{true, {"conv2d_nchw", std::move(args), node.name}, ""};
  }
  if (group == c && w.dims[1] == 1 && k == c) {
    return Mapped{true, {"depthwise_conv2d_nchw", std::move(args), node.name}, ""};
  }
  // Any other grouping (ResNeXt, RegNet; a depthwise channel multiplier
  // above 1) is the grouped conv2d.
  if (group > 1 && c % group == 0 && k % group == 0 && w.dims[1] == c / group) {
    args["K"] = k;
    args["group"] = group;
    return Mapped{true, {"conv2d_nchw", std::move(args), node.name}, ""};
  }
  return NotTuned(
      absl::StrCat("grouped convolution (group=", group, ") of weights ", w.ToString()));
}

[[nodiscard]] absl::StatusOr<Mapped> MapGemm(const Graph& graph, const GraphNode& node) {
  if (node.inputs.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Gemm node '", node.name, "' has fewer than 2 inputs"));
  }
  TF_ASSIGN_OR_RETURN(TensorShape a, graph.ShapeOf(node.inputs[0], &node));
  TF_ASSIGN_OR_RETURN(TensorShape b, graph.ShapeOf(node.inputs[1], &node));
  TF_RETURN_IF_ERROR(RequireFloat(a, node, "input A"));
  if (a.dims.size() != 2 || b.dims.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("Gemm node '", node.name, "': inputs of shapes ",
                                                   a.ToString(), " and ", b.ToString(),
                                                   " are not matrices"));
  }
  if (IntAttribute(node, "transA", 0) != 0) return NotTuned("Gemm with transA=1");
  const bool trans_b = IntAttribute(node, "transB", 0) != 0;
  const int64_t m = a.dims[0], k = a.dims[1];
  const int64_t n = trans_b ? b.dims[0] : b.dims[1];
  if ((trans_b ? b.dims[1] : b.dims[0]) != k) {
    return absl::InvalidArgumentError(absl::StrCat("Gemm node '", node.name, "': shapes ",
                                                   a.ToString(), " and ", b.ToString(),
                                                   " do not multiply"));
  }
  return Mapped{true, {"dense", {{"M", m}, {"N", n}, {"K", k}, {"layout", "NK"}}, node.name}, ""};
}

[[nodiscard]] absl::StatusOr<Mapped> MapMatMul(const Graph& graph, const GraphNode& node) {
  if (node.inputs.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul node '", node.name, "' needs 2 inputs"));
  }
  TF_ASSIGN_OR_RETURN(TensorShape a, graph.ShapeOf(node.inputs[0], &node));
  TF_ASSIGN_OR_RETURN(TensorShape b, graph.ShapeOf(node.inputs[1], &node));
  TF_RETURN_IF_ERROR(RequireFloat(a, node, "input A"));
  if (a.dims.size() < 2 || b.dims.size() < 2) {
    return NotTuned("matrix-vector MatMul with a 1-D operand");
  }
  const int64_t k = a.dims.back();
  const int64_t m = a.dims[a.dims.size() - 2];
  const int64_t n = b.dims.back();
  if (b.dims[b.dims.size() - 2] != k) {
    return absl::InvalidArgumentError(absl::StrCat("MatMul node '", node.name, "': shapes ",
                                                   a.ToString(), " and ", b.ToString(),
                                                   " do not multiply"));
  }
  if (b.dims.size() == 2) {
    // x[..., M, K] @ W[K, N]: one dense over all leading rows.
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < a.dims.size(); ++i) rows *= a.dims[i];
    return Mapped{
        true, {"dense", {{"M", rows}, {"N", n}, {"K", k}, {"layout", "NK"}}, node.name}, ""};
  }
  if (a.dims.size() != b.dims.size()) return NotTuned("MatMul broadcasting a batch dimension");
  int64_t batch = 1;
  for (size_t i = 0; i + 2 < a.dims.size(); ++i) {
    if (a.dims[i] != b.dims[i]) return NotTuned("MatMul broadcasting a batch dimension");
    batch *= a.dims[i];
  }
  return Mapped{
      true,
      {"batch_matmul", {{"B", batch}, {"M", m}, {"N", n}, {"K", k}, {"layout", "KN"}}, node.name},
      ""};
}

}  // namespace

[[nodiscard]] absl::StatusOr<GraphLayers> ExtractLayers(const Graph& graph) {
  GraphLayers result;
  std::map<std::pair<std::string, std::string>, size_t> untuned_index;
  for (const GraphNode& node : graph.nodes) {
    Mapped mapped;
    if (node.op_type == "Conv") {
      TF_ASSIGN_OR_RETURN(mapped, MapConv(graph, node));
    } else if (node.op_type == "Gemm") {
      TF_ASSIGN_OR_RETURN(mapped, MapGemm(graph, node));
    } else if (node.op_type == "MatMul") {
      TF_ASSIGN_OR_RETURN(mapped, MapMatMul(graph, node));
    } else {
      mapped = NotTuned("not a tunable operator");
    }
    if (mapped.tuned) {
      result.layers.push_back(std::move(mapped.layer));
      continue;
    }
    auto [it, inserted] =
        untuned_index.try_emplace({node.op_type, mapped.reason}, result.untuned.size());
    if (inserted) result.untuned.push_back({node.op_type, mapped.reason, 0, {}});
    UntunedOperators& entry = result.untuned[it->second];
    ++entry.count;
    entry.nodes.push_back(node.name);
  }
  return result;
}

}  // namespace tunefleet
