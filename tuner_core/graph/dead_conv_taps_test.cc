// Taps that only read padding are dropped and the convolution computes the
// same floats: an atrous 3 x 3 whose dilation exceeds the map becomes a
// 1 x 1 (pads 0, dilation 1), one whose rows die but whose columns live
// keeps its columns; convolutions with every tap live, or computed
// weights, stay as they are.
#include "tuner_core/graph/dead_conv_taps.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

struct ConvCase {
  std::vector<int64_t> x;  // [1, C, H, W]
  int64_t k = 3;           // output channels
  std::vector<int64_t> kernel, strides, dilations, pads;
};

Graph ConvGraph(const ConvCase& c) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, c.x};
  ConstantTensor w;
  w.shape = {kOnnxFloat, {c.k, c.x[1], c.kernel[0], c.kernel[1]}};
  for (int64_t i = 0; i < c.k * c.x[1] * c.kernel[0] * c.kernel[1]; ++i) {
    w.f32.push_back(std::sin(0.7f * i + 0.3f));
  }
  g.shapes["w"] = w.shape;
  g.constants["w"] = w;
  std::vector<int64_t> y = {1, c.k, 0, 0};  // as shape inference gives it
  for (int d = 0; d < 2; ++d) {
    y[2 + d] = (c.x[2 + d] + c.pads[d] + c.pads[2 + d] - c.dilations[d] * (c.kernel[d] - 1) - 1) /
                   c.strides[d] +
               1;
  }
  g.shapes["y"] = {kOnnxFloat, y};
  GraphNode conv{"conv", "Conv", {"x", "w"}, {"y"}};
  conv.attributes["kernel_shape"] = c.kernel;
  conv.attributes["strides"] = c.strides;
  conv.attributes["dilations"] = c.dilations;
  conv.attributes["pads"] = c.pads;
  g.nodes = {conv};
  return g;
}

// The node's convolution of x, directly from its attributes and weights.
std::vector<float> Convolve(const Graph& g, const std::vector<float>& x) {
  const GraphNode& n = g.nodes[0];
  const ConstantTensor& w = g.constants.at(n.inputs[1]);
  const std::vector<int64_t> xs = g.shapes.at("x").dims;
  const std::vector<int64_t> ks = IntsAttribute(n, "kernel_shape", {});
  const std::vector<int64_t> st = IntsAttribute(n, "strides", {1, 1});
  const std::vector<int64_t> dl = IntsAttribute(n, "dilations", {1, 1});
  const std::vector<int64_t> pd = IntsAttribute(n, "pads", {0, 0, 0, 0});
  const int64_t c = xs[1], h = xs[2], wd = xs[3], k = w.shape.dims[0];
  const int64_t oh = (h + pd[0] + pd[2] - dl[0] * (ks[0] - 1) - 1) / st[0] + 1;
  const int64_t ow = (wd + pd[1] + pd[3] - dl[1] * (ks[1] - 1) - 1) / st[1] + 1;
  std::vector<float> y;
  for (int64_t o = 0; o < k; ++o) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double sum = 0;
        for (int64_t ci = 0; ci < c; ++ci) {
          for (int64_t r = 0; r < ks[0]; ++r) {
            for (int64_t s = 0; s < ks[1]; ++s) {
              const int64_t yy = i * st[0] - pd[0] + r * dl[0];
              const int64_t xx = j * st[1] - pd[1] + s * dl[1];
              if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
              sum += x[(ci * h + yy) * wd + xx] * w.f32[((o * c + ci) * ks[0] + r) * ks[1] + s];
            }
          }
        }
        y.push_back(static_cast<float>(sum));
      }
    }
  }
  return y;
}

TEST(DeadConvTapsTest, DropsTapsThatOnlyReadPaddingAndComputesTheSame) {
  struct Want {
    ConvCase conv;
    std::vector<int64_t> kernel, pads, dilations;
  };
  for (const Want& want : std::vector<Want>{
           // DeepLabV3's pyramid: dilation 6 on a 5 x 5 map, pads 6.
           {{{1, 2, 5, 5}, 3, {3, 3}, {1, 1}, {6, 6}, {6, 6, 6, 6}}, {1, 1}, {0, 0, 0, 0}, {1, 1}},
           // Rows dead (3 rows, dilation 4), columns live (12 wide, dilation 2).
           {{{1, 2, 3, 12}, 2, {3, 3}, {1, 1}, {4, 2}, {4, 2, 4, 2}}, {1, 3}, {0, 2, 0, 2}, {1, 2}},
           // Strided: 2 outputs per axis, only the centre taps land inside.
           {{{1, 1, 4, 4}, 2, {3, 3}, {2, 2}, {5, 5}, {5, 5, 5, 5}}, {1, 1}, {0, 0, 0, 0}, {1, 1}},
       }) {
    Graph g = ConvGraph(want.conv);
    const Graph before = g;
    ASSERT_EQ(DropDeadConvTaps(&g), 1);
    const GraphNode& n = g.nodes[0];
    EXPECT_EQ(n.inputs[1], "conv.live_taps");
    EXPECT_EQ(IntsAttribute(n, "kernel_shape", {}), want.kernel);
    EXPECT_EQ(IntsAttribute(n, "pads", {}), want.pads);
    EXPECT_EQ(IntsAttribute(n, "dilations", {}), want.dilations);
    EXPECT_EQ(g.shapes.at("conv.live_taps").dims,
              (std::vector<int64_t>{want.conv.k, want.conv.x[1], want.kernel[0], want.kernel[1]}));
    std::vector<float> x;
    for (int64_t i = 0; i < want.conv.x[1] * want.conv.x[2] * want.conv.x[3]; ++i) {
      x.push_back(std::cos(0.37f * i));
    }
    const std::vector<float> expected = Convolve(before, x), got = Convolve(g, x);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-5) << i;
  }
}

TEST(DeadConvTapsTest, LeavesConvolutionsWhoseTapsAllReadInput) {
  // Dilation 2 on a 5 x 5 map: every tap reads the image somewhere.
  Graph g = ConvGraph({{1, 2, 5, 5}, 3, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}});
  EXPECT_EQ(DropDeadConvTaps(&g), 0);
  EXPECT_EQ(g.nodes[0].inputs[1], "w");
  // Weights computed at run time: nothing to slice.
  Graph computed = ConvGraph({{1, 2, 5, 5}, 3, {3, 3}, {1, 1}, {6, 6}, {6, 6, 6, 6}});
  computed.constants.clear();
  EXPECT_EQ(DropDeadConvTaps(&computed), 0);
  // Pads that would go below zero (a crop): left as it is.
  Graph cropped = ConvGraph({{1, 1, 2, 2}, 1, {3, 3}, {1, 1}, {4, 4}, {1, 1, 1, 1}});
  EXPECT_EQ(DropDeadConvTaps(&cropped), 0);
}

}  // namespace
}  // namespace tunefleet
