// The layer scale folded into the MatMul before it, through its bias Add
// and a Transpose that moves the MatMul's columns to the scaled axis, with
// the products worked by hand; the Mul stays where the chain branches, the
// scale is not per column, or the Transpose puts another axis there.
#include "compiler/passes/fold_layer_scale.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/graph/constant_testing.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;

// ConvNeXt's block end: x [1,1,1,2] -> MatMul (w [2,2]) -> Add (b [2]) ->
// Transpose (0,3,1,2) -> Mul (gamma [2,1,1]) -> y [1,2,1,1].
Graph LayerScaleBlock() {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {1, 1, 1, 2}};
  g.shapes["mm"] = g.shapes["sum"] = {kOnnxFloat, {1, 1, 1, 2}};
  g.shapes["t"] = g.shapes["y"] = {kOnnxFloat, {1, 2, 1, 1}};
  g.constants["w"] = Floats({2, 2}, {1, 2, 3, 4});
  g.constants["b"] = Floats({2}, {0.5f, -1});
  g.constants["gamma"] = Floats({2, 1, 1}, {10, 100});
  g.nodes.push_back({"matmul", "MatMul", {"x", "w"}, {"mm"}});
  g.nodes.push_back({"add", "Add", {"b", "mm"}, {"sum"}});
  GraphNode transpose{"transpose", "Transpose", {"sum"}, {"t"}};
  transpose.attributes["perm"] = {0, 3, 1, 2};
  g.nodes.push_back(transpose);
  g.nodes.push_back({"mul", "Mul", {"gamma", "t"}, {"y"}});
  return g;
}

TEST(FoldLayerScaleTest, ScalesTheColumnsOfTheWeightsAndTheBias) {
  Graph g = LayerScaleBlock();
  EXPECT_EQ(FoldLayerScale(&g), 1);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[2].op_type, "Transpose");
  EXPECT_EQ(g.nodes[2].outputs[0], "y");
  // w [[1,2],[3,4]]: column 0 times 10, column 1 times 100.
  EXPECT_THAT(g.constants.at(g.nodes[0].inputs[1]).f32,
              ElementsAre(FloatEq(10), FloatEq(200), FloatEq(30), FloatEq(400)));
  EXPECT_THAT(g.constants.at(g.nodes[1].inputs[0]).f32, ElementsAre(FloatEq(5), FloatEq(-100)));
  EXPECT_THAT(g.constants.at("w").f32, ElementsAre(1, 2, 3, 4));  // the originals are untouched
  EXPECT_THAT(g.constants.at("b").f32, ElementsAre(0.5f, -1));
}

TEST(FoldLayerScaleTest, WithoutATransposeTheLastAxisIsScaled) {
  Graph g = LayerScaleBlock();
  g.nodes.erase(g.nodes.begin() + 2);
  g.nodes[2].inputs = {"sum", "gamma"};
  g.constants["gamma"] = Floats({2}, {10, 100});
  g.shapes["y"] = g.shapes["sum"];
  EXPECT_EQ(FoldLayerScale(&g), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].outputs[0], "y");
  EXPECT_THAT(g.constants.at(g.nodes[0].inputs[1]).f32,
              ElementsAre(FloatEq(10), FloatEq(200), FloatEq(30), FloatEq(400)));
}

TEST(FoldLayerScaleTest, StaysWhereTheChainBranchesOrTheAxesDoNotMatch) {
  {
    Graph g = LayerScaleBlock();
    g.outputs.push_back("sum");  // the sum is read as it is
    EXPECT_EQ(FoldLayerScale(&g), 0);
    EXPECT_EQ(g.nodes.size(), 4u);
  }
  {
    Graph g = LayerScaleBlock();
    g.nodes[2].attributes["perm"] = {0, 2, 3, 1};  // axis 1 comes from the input's axis 2
    g.shapes["t"] = g.shapes["y"] = {kOnnxFloat, {1, 1, 2, 1}};
    EXPECT_EQ(FoldLayerScale(&g), 0);
  }
  {
    Graph g = LayerScaleBlock();
    g.constants["gamma"] = Floats({2, 1, 2}, {1, 2, 3, 4});  // two scaled axes
    EXPECT_EQ(FoldLayerScale(&g), 0);
  }
  {
    Graph g = LayerScaleBlock();
    g.nodes[0].inputs[1] = "x";  // a MatMul of two activations
    EXPECT_EQ(FoldLayerScale(&g), 0);
  }
}

}  // namespace
}  // namespace tunefleet
