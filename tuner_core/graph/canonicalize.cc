#include "tuner_core/graph/canonicalize.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tuner_core/graph/static_shapes.h"

namespace tunefleet {
namespace {

// ConvTranspose(x, W [C, K/g, kh, kw], B) as Conv(Dilate(x), W') with W'
// [K, C/g, kh, kw] the flipped kernel: output position o of the transposed
// convolution gathers x[i] * W[o - i * s + p] (dilated), which is a stride-1
// convolution of x spread by s and padded by d * (k - 1) - p (begin) and
// d * (k - 1) - p + output_padding (end).
[[nodiscard]] absl::Status LowerConvTranspose(Graph* graph, const GraphNode& node,
                                              std::vector<GraphNode>* nodes) {
  if (node.inputs.size() < 2) return NodeError(node, "needs input and weights");
  auto w = graph->constants.find(node.inputs[1]);
  if (w == graph->constants.end() || w->second.shape.dtype != kOnnxFloat) {
    return NodeError(node, "weights are not a float32 constant");
  }
  const std::vector<int64_t>& wd = w->second.shape.dims;
  if (wd.size() != 4) return NodeError(node, "only 2-D ConvTranspose is supported");
  const int64_t group = IntAttribute(node, "group", 1), c = wd[0], kg = wd[1];
  if (group < 1 || c % group != 0) return NodeError(node, "group does not divide the channels");
  const std::vector<int64_t> kernel = IntsAttribute(node, "kernel_shape", {wd[2], wd[3]});
  const std::vector<int64_t> strides = IntsAttribute(node, "strides", {1, 1});
  const std::vector<int64_t> dilations = IntsAttribute(node, "dilations", {1, 1});
  const std::vector<int64_t> extra = IntsAttribute(node, "output_padding", {0, 0});
  std::vector<int64_t> pads = IntsAttribute(node, "pads", {0, 0, 0, 0});
  if (kernel != std::vector<int64_t>{wd[2], wd[3]} || strides.size() != 2 ||
      dilations.size() != 2 || extra.size() != 2 || pads.size() != 4) {
    return NodeError(node, "kernel_shape, strides, dilations, pads or output_padding do not fit");
  }
  const std::string auto_pad = StringAttribute(node, "auto_pad", "NOTSET");
  const std::vector<int64_t> output_shape = IntsAttribute(node, "output_shape", {});
  if (!output_shape.empty() || auto_pad != "NOTSET") {
    // The pads that give the output shape asked for (ONNX: total padding
    // s * (in - 1) + output_padding + (k - 1) * d + 1 - out; SAME_* asks
    // for in * s), the odd one at the end (SAME_UPPER, NOTSET) or start.
    auto in = graph->shapes.find(node.inputs[0]);
    if (in == graph->shapes.end() || in->second.dims.size() != 4) {
      return NodeError(node, "output_shape or auto_pad needs the input's shape");
    }
    if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
        auto_pad != "VALID") {
      return NodeError(node, absl::StrCat("auto_pad '", auto_pad, "' is not supported"));
    }
    for (size_t d = 0; d < 2 && auto_pad != "VALID"; ++d) {
      const int64_t size = in->second.dims[2 + d];
      const int64_t want = output_shape.empty()       ? size * strides[d]
                           : output_shape.size() == 2 ? output_shape[d]
                                                      : output_shape[output_shape.size() - 2 + d];
      const int64_t total =
          strides[d] * (size - 1) + extra[d] + (kernel[d] - 1) * dilations[d] + 1 - want;
      const int64_t half = total / 2;
      pads[d] = auto_pad == "SAME_LOWER" ? total - half : half;
      pads[2 + d] = total - pads[d];
    }
    if (auto_pad == "VALID") pads = {0, 0, 0, 0};
  }
  GraphNode dilate{
      node.name + ".spread", kDilateOp, {node.inputs[0]}, {node.name + ".spread_output"}};
  dilate.attributes["strides"] = strides;
  std::vector<int64_t> spread_pads(4);
  for (size_t d = 0; d < 2; ++d) {
    const int64_t reach = dilations[d] * (kernel[d] - 1);
    spread_pads[d] = reach - pads[d];
    spread_pads[2 + d] = reach - pads[2 + d] + extra[d];
  }
  dilate.attributes["pads"] = spread_pads;
  // W'[g * K/g + k, ci, y, x] = W[g * C/g + ci, k, kh - 1 - y, kw - 1 - x].
  const int64_t cg = c / group, kh = wd[2], kw = wd[3];
  ConstantTensor flipped;
  flipped.shape = {kOnnxFloat, {group * kg, cg, kh, kw}};
  flipped.f32.resize(w->second.f32.size());
  const std::vector<float>& src = w->second.f32;
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t k = 0; k < kg; ++k) {
      for (int64_t ci = 0; ci < cg; ++ci) {
        for (int64_t y = 0; y < kh; ++y) {
          for (int64_t x = 0; x < kw; ++x) {
            flipped.f32[(((g * kg + k) * cg + ci) * kh + y) * kw + x] =
                src[(((g * cg + ci) * kg + k) * kh + (kh - 1 - y)) * kw + (kw - 1 - x)];
          }
        }
      }
    }
  }
  const std::string weights = node.name + ".weight_flipped";
  graph->shapes[weights] = flipped.shape;
  graph->constants[weights] = std::move(flipped);
  GraphNode conv{node.name, "Conv", {dilate.outputs[0], weights}, node.outputs};
  if (node.inputs.size() > 2) conv.inputs.push_back(node.inputs[2]);
  conv.attributes["kernel_shape"] = kernel;
  conv.attributes["dilations"] = dilations;
  if (group > 1) conv.attributes["group"] = group;
  nodes->push_back(std::move(dilate));
  nodes->push_back(std::move(conv));
  return absl::OkStatus();
}

}  // namespace

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
    if (op == "ConvTranspose") {
      TF_RETURN_IF_ERROR(LowerConvTranspose(graph, node, &nodes));
      continue;
    }
    nodes.push_back(std::move(node));
  }
  graph->nodes = std::move(nodes);
  return absl::OkStatus();
}

}  // namespace tunefleet
