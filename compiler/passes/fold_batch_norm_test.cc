// BatchNormalization folded into the Conv before it, against the formula
// worked by hand; one that follows no Conv, or whose Conv output has another
// reader, stays.
#include "compiler/passes/fold_batch_norm.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/graph/constant_testing.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;

// x [1, 1, 1, 1] -> Conv (2 output channels, 1x1, weights 1 and 2, bias
// 0.5 and -1) -> BatchNormalization -> y.
Graph ConvBatchNorm() {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {1, 1, 1, 1}};
  g.shapes["c"] = g.shapes["y"] = {kOnnxFloat, {1, 2, 1, 1}};
  g.constants["w"] = Floats({2, 1, 1, 1}, {1, 2});
  g.constants["b"] = Floats({2}, {0.5f, -1});
  g.constants["scale"] = Floats({2}, {2, 3});
  g.constants["beta"] = Floats({2}, {1, 0});
  g.constants["mean"] = Floats({2}, {0.5f, 1});
  g.constants["var"] = Floats({2}, {4, 9});
  g.nodes.push_back({"conv", "Conv", {"x", "w", "b"}, {"c"}});
  GraphNode bn{"bn", "BatchNormalization", {"c", "scale", "beta", "mean", "var"}, {"y"}};
  bn.attributes["epsilon"] = 0.0;
  g.nodes.push_back(bn);
  return g;
}

TEST(FoldBatchNormTest, FoldsIntoTheConvBeforeIt) {
  Graph g = ConvBatchNorm();
  ASSERT_TRUE(FoldBatchNorm(&g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  const GraphNode& conv = g.nodes[0];
  EXPECT_EQ(conv.outputs[0], "y");
  // s = scale / sqrt(var) = 1, 1: w' = w, b' = (b - mean) * s + beta.
  EXPECT_THAT(g.constants.at(conv.inputs[1]).f32, ElementsAre(FloatEq(1), FloatEq(2)));
  EXPECT_THAT(g.constants.at(conv.inputs[2]).f32, ElementsAre(FloatEq(1), FloatEq(-2)));
  EXPECT_THAT(g.constants.at("w").f32, ElementsAre(1, 2));  // the original is untouched
}

TEST(FoldBatchNormTest, AConvWithoutBiasGetsOne) {
  Graph g = ConvBatchNorm();
  g.nodes[0].inputs.pop_back();
  g.constants["scale"].f32 = {4, 3};
  ASSERT_TRUE(FoldBatchNorm(&g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_THAT(g.constants.at(g.nodes[0].inputs[1]).f32, ElementsAre(FloatEq(2), FloatEq(2)));
  EXPECT_THAT(g.constants.at(g.nodes[0].inputs[2]).f32, ElementsAre(FloatEq(0), FloatEq(-1)));
}

TEST(FoldBatchNormTest, KeepsOneWhoseConvOutputHasAnotherReader) {
  Graph g = ConvBatchNorm();
  g.outputs.push_back("c");
  ASSERT_TRUE(FoldBatchNorm(&g).ok());
  EXPECT_EQ(g.nodes.size(), 2u);
  Graph after_relu = ConvBatchNorm();
  after_relu.nodes.insert(after_relu.nodes.begin() + 1, {"relu", "Relu", {"c"}, {"r"}});
  after_relu.nodes[2].inputs[0] = "r";
  ASSERT_TRUE(FoldBatchNorm(&after_relu).ok());
  EXPECT_EQ(after_relu.nodes.size(), 3u);
}

TEST(FoldBatchNormTest, ParametersOfTheWrongLengthNameTheNode) {
  Graph g = ConvBatchNorm();
  g.constants["var"].f32 = {4, 9, 1};
  const absl::Status status = FoldBatchNorm(&g);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 'bn' (BatchNormalization)"));
}

}  // namespace
}  // namespace tunefleet
