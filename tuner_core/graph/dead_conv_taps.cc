#include "tuner_core/graph/dead_conv_taps.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace tunefleet {
namespace {

// The live taps [first, last] of one axis: taps some output position reads
// a real input value through (size `in`, `taps` taps `dilation` apart, the
// padding before it `pad`, `out` output positions `stride` apart).
// first > last when none is live.
struct LiveTaps {
  int64_t first = 0, last = -1;
};

LiveTaps LiveTapsOf(int64_t in, int64_t taps, int64_t stride, int64_t dilation, int64_t pad,
                    int64_t out) {
  LiveTaps live{taps, -1};
  for (int64_t t = 0; t < taps; ++t) {
    for (int64_t o = 0; o < out; ++o) {
      const int64_t at = o * stride - pad + t * dilation;
      if (at >= 0 && at < in) {
        live.first = std::min(live.first, t);
        live.last = std::max(live.last, t);
        break;
      }
    }
  }
  return live;
}

bool Narrow(Graph* graph, GraphNode* node) {
  if (node->op_type != "Conv" || node->inputs.size() < 2) return false;
  auto w = graph->constants.find(node->inputs[1]);
  auto x = graph->shapes.find(node->inputs[0]);
  auto y = node->outputs.empty() ? graph->shapes.end() : graph->shapes.find(node->outputs[0]);
  if (w == graph->constants.end() || w->second.shape.dtype != kOnnxFloat ||
      w->second.shape.dims.size() != 4 || x == graph->shapes.end() || x->second.dims.size() != 4 ||
      y == graph->shapes.end() || y->second.dims.size() != 4 ||
      StringAttribute(*node, "auto_pad", "NOTSET") != "NOTSET") {
    return false;
  }
  const std::vector<int64_t>& wd = w->second.shape.dims;
  const std::vector<int64_t> kernel = IntsAttribute(*node, "kernel_shape", {wd[2], wd[3]});
  const std::vector<int64_t> strides = IntsAttribute(*node, "strides", {1, 1});
  const std::vector<int64_t> dilations = IntsAttribute(*node, "dilations", {1, 1});
  std::vector<int64_t> pads = IntsAttribute(*node, "pads", {0, 0, 0, 0});
  if (kernel != std::vector<int64_t>{wd[2], wd[3]} || strides.size() != 2 ||
      dilations.size() != 2 || pads.size() != 4 ||
      static_cast<int64_t>(w->second.f32.size()) != wd[0] * wd[1] * wd[2] * wd[3]) {
    return false;
  }
  LiveTaps live[2];
  bool narrower = false;
  for (int d = 0; d < 2; ++d) {
    // The output size shape inference gave it, which the narrowed
    // convolution keeps.
    const int64_t in = x->second.dims[2 + d], out = y->second.dims[2 + d];
    if (in <= 0 || out <= 0 || strides[d] < 1 || dilations[d] < 1) return false;
    live[d] = LiveTapsOf(in, kernel[d], strides[d], dilations[d], pads[d], out);
    if (live[d].first > live[d].last) return false;  // all padding: leave it be
    const int64_t before = pads[d] - live[d].first * dilations[d];
    const int64_t after = pads[2 + d] - (kernel[d] - 1 - live[d].last) * dilations[d];
    if (before < 0 || after < 0) return false;
    if (live[d].first > 0 || live[d].last < kernel[d] - 1) narrower = true;
    pads[d] = before;
    pads[2 + d] = after;
  }
  if (!narrower) return false;
  const int64_t rows = live[0].last - live[0].first + 1;
  const int64_t cols = live[1].last - live[1].first + 1;
  ConstantTensor taps;
  taps.shape = {kOnnxFloat, {wd[0], wd[1], rows, cols}};
  taps.f32.reserve(wd[0] * wd[1] * rows * cols);
  const std::vector<float>& src = w->second.f32;
  for (int64_t kc = 0; kc < wd[0] * wd[1]; ++kc) {
    for (int64_t r = live[0].first; r <= live[0].last; ++r) {
      for (int64_t c = live[1].first; c <= live[1].last; ++c) {
        taps.f32.push_back(src[(kc * wd[2] + r) * wd[3] + c]);
      }
    }
  }
  const std::string name = node->name + ".live_taps";
  graph->shapes[name] = taps.shape;
  graph->constants[name] = std::move(taps);
  node->inputs[1] = name;
  node->attributes["kernel_shape"] = std::vector<int64_t>{rows, cols};
  node->attributes["pads"] = pads;
  node->attributes["dilations"] =
      std::vector<int64_t>{rows == 1 ? 1 : dilations[0], cols == 1 ? 1 : dilations[1]};
  return true;
}

}  // namespace

int DropDeadConvTaps(Graph* graph) {
  int narrowed = 0;
  for (GraphNode& node : graph->nodes) narrowed += Narrow(graph, &node) ? 1 : 0;
  return narrowed;
}

}  // namespace tunefleet
