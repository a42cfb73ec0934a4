// The decompositions exporters write, rewritten into one node each: GELU
// (both product orders; the Erf and the tanh forms), SiLU and LayerNorm with and without its affine
// part; a chain whose inner tensor has another reader is left alone.
#include "compiler/passes/fuse_patterns.h"

#include <string>
#include <utility>

#include "compiler/operator_table.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

void Scalar(Graph& g, const std::string& name, float value) {
  g.constants[name].shape = {kOnnxFloat, {}};
  g.constants[name].f32 = {value};
}

// Input x [2, 8], output y: the graphs of the activation patterns.
Graph XToY() {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {2, 8}};
  return g;
}

Graph Gelu(bool half_first) {
  Graph g = XToY();
  Scalar(g, "sqrt2", 1.4142135f);
  Scalar(g, "one", 1.0f);
  Scalar(g, "half", 0.5f);
  g.nodes.push_back({"div", "Div", {"x", "sqrt2"}, {"d"}});
  g.nodes.push_back({"erf", "Erf", {"d"}, {"e"}});
  g.nodes.push_back({"add", "Add", {"e", "one"}, {"p"}});
  if (half_first) {
    g.nodes.push_back({"half", "Mul", {"x", "half"}, {"h"}});
    g.nodes.push_back({"mul", "Mul", {"h", "p"}, {"y"}});
  } else {
    g.nodes.push_back({"mul", "Mul", {"x", "p"}, {"m"}});
    g.nodes.push_back({"half", "Mul", {"m", "half"}, {"y"}});
  }
  return g;
}

TEST(FusePatternsTest, GeluInEitherOrderBecomesOneNode) {
  for (bool half_first : {false, true}) {
    Graph g = Gelu(half_first);
    ASSERT_TRUE(FusePatterns(&g).ok());
    ASSERT_EQ(g.nodes.size(), 1u) << half_first;
    EXPECT_EQ(g.nodes[0].op_type, "Gelu");
    EXPECT_THAT(g.nodes[0].inputs, ElementsAre("x"));
    EXPECT_THAT(g.nodes[0].outputs, ElementsAre("y"));
  }
}

// GELU's tanh form as PyTorch exports GELU(approximate="tanh"): x^3 as two
// products (or Pow), each product's operands in the exporter's order or
// swapped.
Graph GeluTanh(bool pow, bool swapped) {
  Graph g = XToY();
  Scalar(g, "c", 0.044715f);
  Scalar(g, "k", 0.7978846f);
  Scalar(g, "one", 1.0f);
  Scalar(g, "half", 0.5f);
  Scalar(g, "three", 3.0f);
  auto mul = [&](const char* name, std::string a, std::string b, const char* out) {
    if (swapped) std::swap(a, b);
    g.nodes.push_back({name, "Mul", {a, b}, {out}});
  };
  if (pow) {
    g.nodes.push_back({"cube", "Pow", {"x", "three"}, {"x3"}});
  } else {
    mul("sq", "x", "x", "x2");
    mul("cube", "x", "x2", "x3");
  }
  mul("scale", "c", "x3", "t");
  g.nodes.push_back({"sum", "Add", {swapped ? "t" : "x", swapped ? "x" : "t"}, {"s"}});
  mul("inner", "k", "s", "u");
  g.nodes.push_back({"tanh", "Tanh", {"u"}, {"th"}});
  g.nodes.push_back({"plus", "Add", {"one", "th"}, {"p"}});
  mul("times_x", "x", "p", "m");
  mul("times_half", "half", "m", "y");
  return g;
}

TEST(FusePatternsTest, GeluTanhFormBecomesOneNode) {
  for (bool pow : {false, true}) {
    for (bool swapped : {false, true}) {
      Graph g = GeluTanh(pow, swapped);
      ASSERT_TRUE(FusePatterns(&g).ok());
      ASSERT_EQ(g.nodes.size(), 1u) << pow << swapped;
      EXPECT_EQ(g.nodes[0].op_type, "Gelu");
      EXPECT_EQ(g.nodes[0].attributes.value("approximate", std::string()), "tanh");
      EXPECT_THAT(g.nodes[0].inputs, ElementsAre("x"));
      EXPECT_THAT(g.nodes[0].outputs, ElementsAre("y"));
    }
  }
  // The cube read elsewhere, or another coefficient: left as it is.
  Graph g = GeluTanh(false, false);
  g.outputs.push_back("x3");
  ASSERT_TRUE(FusePatterns(&g).ok());
  EXPECT_EQ(g.nodes.size(), 9u);
  g = GeluTanh(true, false);
  Scalar(g, "c", 0.05f);
  ASSERT_TRUE(FusePatterns(&g).ok());
  EXPECT_EQ(g.nodes.size(), 8u);
}

TEST(FusePatternsTest, AChainWhoseInnerTensorIsReadElsewhereStays) {
  Graph g = Gelu(false);
  g.outputs.push_back("e");  // the Erf's output is a graph output
  ASSERT_TRUE(FusePatterns(&g).ok());
  EXPECT_EQ(g.nodes.size(), 5u);
  Graph wrong_constant = Gelu(false);
  Scalar(wrong_constant, "sqrt2", 2.0f);
  ASSERT_TRUE(FusePatterns(&wrong_constant).ok());
  EXPECT_EQ(wrong_constant.nodes.size(), 5u);
}

TEST(FusePatternsTest, SiluBecomesOneNode) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.nodes.push_back({"sig", "Sigmoid", {"x"}, {"s"}});
  g.nodes.push_back({"mul", "Mul", {"s", "x"}, {"y"}});
  ASSERT_TRUE(FusePatterns(&g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, kSiluOp);
}

Graph LayerNorm(bool affine) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {2, 4}};
  Scalar(g, "two", 2.0f);
  Scalar(g, "eps", 1e-5f);
  g.constants["gamma"].shape = g.constants["beta"].shape = {kOnnxFloat, {4}};
  g.constants["gamma"].f32 = g.constants["beta"].f32 = {1, 2, 3, 4};
  GraphNode mean{"mean", "ReduceMean", {"x"}, {"m"}};
  mean.attributes["axes"] = {-1};
  g.nodes.push_back(mean);
  g.nodes.push_back({"sub", "Sub", {"x", "m"}, {"d"}});
  g.nodes.push_back({"pow", "Pow", {"d", "two"}, {"p"}});
  GraphNode var{"var", "ReduceMean", {"p"}, {"v"}};
  var.attributes["axes"] = {-1};
  g.nodes.push_back(var);
  g.nodes.push_back({"eps", "Add", {"v", "eps"}, {"ve"}});
  g.nodes.push_back({"sqrt", "Sqrt", {"ve"}, {"s"}});
  g.nodes.push_back({"div", "Div", {"d", "s"}, {affine ? "n" : "y"}});
  if (affine) {
    g.nodes.push_back({"scale", "Mul", {"n", "gamma"}, {"g"}});
    g.nodes.push_back({"shift", "Add", {"g", "beta"}, {"y"}});
  }
  return g;
}

TEST(FusePatternsTest, LayerNormDecompositionBecomesLayerNormalization) {
  for (bool affine : {true, false}) {
    Graph g = LayerNorm(affine);
    ASSERT_TRUE(FusePatterns(&g).ok());
    ASSERT_EQ(g.nodes.size(), 1u) << affine;
    const GraphNode& norm = g.nodes[0];
    EXPECT_EQ(norm.op_type, "LayerNormalization");
    EXPECT_FLOAT_EQ(norm.attributes["epsilon"].get<float>(), 1e-5f);
    if (affine) {
      EXPECT_THAT(norm.inputs, ElementsAre("x", "gamma", "beta"));
    } else {
      EXPECT_THAT(norm.inputs, ElementsAre("x", "", ""));
    }
    EXPECT_THAT(norm.outputs, ElementsAre("y"));
  }
}

// Inception's pooling branch: Pad (zeros, spatial axes) then AveragePool.
Graph PaddedPool() {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {1, 8, 5, 5}};
  g.shapes["p"] = {kOnnxFloat, {1, 8, 8, 7}};
  g.shapes["y"] = {kOnnxFloat, {1, 8, 6, 5}};
  g.constants["pads"].shape = {kOnnxInt64, {8}};
  g.constants["pads"].i64 = {0, 0, 1, 1, 0, 0, 2, 1};
  g.nodes.push_back({"pad", "Pad", {"x", "pads"}, {"p"}});
  GraphNode pool{"pool", "AveragePool", {"p"}, {"y"}};
  pool.attributes["kernel_shape"] = std::vector<int64_t>{3, 3};
  g.nodes.push_back(pool);
  return g;
}

TEST(FusePatternsTest, ZeroPadBeforeAveragePoolBecomesThePoolsPadding) {
  Graph g = PaddedPool();
  ASSERT_TRUE(FusePatterns(&g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "AveragePool");
  EXPECT_THAT(g.nodes[0].inputs, ElementsAre("x"));
  EXPECT_THAT(g.nodes[0].outputs, ElementsAre("y"));
  EXPECT_THAT(IntsAttribute(g.nodes[0], "pads", {}), ElementsAre(1, 1, 2, 1));
  EXPECT_EQ(IntAttribute(g.nodes[0], "count_include_pad", 0), 1);
  EXPECT_THAT(IntsAttribute(g.nodes[0], "kernel_shape", {}), ElementsAre(3, 3));
}

TEST(FusePatternsTest, PadsThePoolCannotTakeStay) {
  std::vector<Graph> graphs;
  graphs.push_back(PaddedPool());  // pads the channels too
  graphs.back().constants["pads"].i64 = {0, 1, 1, 1, 0, 0, 2, 1};
  graphs.push_back(PaddedPool());  // pads with ones
  graphs.back().nodes[0].attributes["value"] = 1.0f;
  graphs.push_back(PaddedPool());  // reflects
  graphs.back().nodes[0].attributes["mode"] = "reflect";
  graphs.push_back(PaddedPool());  // the pool pads as well
  graphs.back().nodes[1].attributes["pads"] = std::vector<int64_t>{1, 0, 0, 0};
  graphs.push_back(PaddedPool());  // a max pool: padded zeros are not -inf
  graphs.back().nodes[1].op_type = "MaxPool";
  graphs.push_back(PaddedPool());  // the padded tensor is read elsewhere
  graphs.back().outputs.push_back("p");
  for (size_t i = 0; i < graphs.size(); ++i) {
    ASSERT_TRUE(FusePatterns(&graphs[i]).ok()) << i;
    EXPECT_EQ(graphs[i].nodes.size(), 2u) << i;
  }
}

TEST(FusePatternsTest, ChannelShuffleBecomesAGatherOfTheChannels) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {1, 6, 4, 4}};
  g.shapes["s"] = {kOnnxFloat, {1, 2, 3, 4, 4}};
  g.shapes["t"] = {kOnnxFloat, {1, 3, 2, 4, 4}};
  g.shapes["y"] = {kOnnxFloat, {1, 6, 4, 4}};
  g.nodes.push_back({"split", "Reshape", {"x", "to5"}, {"s"}});
  GraphNode transpose{"swap", "Transpose", {"s"}, {"t"}};
  transpose.attributes["perm"] = std::vector<int64_t>{0, 2, 1, 3, 4};
  g.nodes.push_back(transpose);
  g.nodes.push_back({"join", "Reshape", {"t", "to4"}, {"y"}});
  Graph other_perm = g;
  ASSERT_TRUE(FusePatterns(&g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Gather");
  EXPECT_EQ(IntAttribute(g.nodes[0], "axis", 0), 1);
  ASSERT_EQ(g.nodes[0].inputs.size(), 2u);
  EXPECT_EQ(g.nodes[0].inputs[0], "x");
  EXPECT_THAT(g.constants.at(g.nodes[0].inputs[1]).i64, ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_THAT(g.nodes[0].outputs, ElementsAre("y"));
  // Any other transpose is not a shuffle.
  other_perm.nodes[1].attributes["perm"] = std::vector<int64_t>{0, 1, 2, 4, 3};
  ASSERT_TRUE(FusePatterns(&other_perm).ok());
  EXPECT_EQ(other_perm.nodes.size(), 3u);
}

}  // namespace
}  // namespace tunefleet
