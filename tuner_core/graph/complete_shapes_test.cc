// Shape completion (fold_constants.h, infer_shapes.h) on graphs written by
// hand: ScatterND folded at compile time (Swin's attention mask), a Pad
// whose pads a Shape subgraph computes (found in a later round, not an
// error), and errors that say where inference stopped.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/graph/canonicalize.h"
#include "tuner_core/graph/constant_testing.h"
#include "tuner_core/graph/fold_constants.h"
#include "tuner_core/graph/infer_shapes.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CompleteShapesTest, ScatterNdFoldsRowsAndElements) {
  Graph g;
  g.constants["data"] = Floats({3, 2}, {0, 0, 0, 0, 0, 0});
  g.constants["rows"] = Ints({2, 1}, {2, -3});  // rows 2 and 0
  g.constants["row_values"] = Floats({2, 2}, {5, 6, 7, 8});
  g.constants["cells"] = Ints({2, 2}, {1, 1, 2, 1});
  g.constants["cell_values"] = Floats({2}, {10, 20});
  g.nodes.push_back({"rows", "ScatterND", {"data", "rows", "row_values"}, {"a"}});
  GraphNode add{"cells", "ScatterND", {"a", "cells", "cell_values"}, {"b"}};
  add.attributes["reduction"] = "add";
  g.nodes.push_back(add);
  g.outputs = {"b"};
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->nodes.empty());
  EXPECT_THAT(done->constants.at("b").f32, ElementsAre(7, 8, 0, 10, 5, 26));
}

TEST(CompleteShapesTest, ScatterNdIndexOutOfRangeNamesTheNode) {
  Graph g;
  g.constants["data"] = Floats({2}, {0, 0});
  g.constants["at"] = Ints({1, 1}, {2});
  g.constants["v"] = Floats({1}, {1});
  g.nodes.push_back({"scatter", "ScatterND", {"data", "at", "v"}, {"y"}});
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(done.status().message(), HasSubstr("scatter"));
  EXPECT_THAT(done.status().message(), HasSubstr("out of range"));
}

// x [1, 5] -> Relu -> Shape -> Gather(1) -> Mod 4 -> Concat into pads: the
// pads fold only after Relu's shape is known, so Pad's shape is found in a
// later round, not refused.
TEST(CompleteShapesTest, PadWhosePadsFoldInALaterRound) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  g.shapes["x"] = {kOnnxFloat, {1, 5}};
  g.constants["one"] = Ints({1}, {1});
  g.constants["four"] = Ints({1}, {4});
  g.constants["zeros"] = Ints({3}, {0, 0, 0});
  g.nodes.push_back({"relu", "Relu", {"x"}, {"r"}});
  g.nodes.push_back({"shape", "Shape", {"r"}, {"s"}});
  g.nodes.push_back({"width", "Gather", {"s", "one"}, {"w"}});
  g.nodes.push_back({"mod", "Mod", {"w", "four"}, {"m"}});
  GraphNode concat{"concat", "Concat", {"zeros", "m"}, {"pads"}};
  concat.attributes["axis"] = 0;
  g.nodes.push_back(concat);
  g.nodes.push_back({"pad", "Pad", {"r", "pads"}, {"y"}});
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(1, 6));
}

// Max of three inputs becomes a chain of two binary Max nodes whose
// shapes broadcast; a Gemm's transA a Transpose of its A.
TEST(CompleteShapesTest, CanonicalFormsOfVariadicMaxAndGemmTransA) {
  Graph g;
  g.inputs = {"a", "b", "c", "x"};
  g.shapes["a"] = {kOnnxFloat, {2, 1}};
  g.shapes["b"] = {kOnnxFloat, {1, 3}};
  g.shapes["c"] = {kOnnxFloat, {3}};
  g.shapes["x"] = {kOnnxFloat, {4, 2}};
  g.constants["w"] = Floats({4, 5}, std::vector<float>(20, 1.0f));
  g.shapes["w"] = g.constants["w"].shape;
  g.nodes.push_back({"max", "Max", {"a", "b", "c"}, {"m"}});
  GraphNode gemm{"gemm", "Gemm", {"x", "w"}, {"y"}};
  gemm.attributes["transA"] = 1;
  g.nodes.push_back(gemm);
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].name, "max.part1");
  EXPECT_THAT(g.nodes[0].inputs, ElementsAre("a", "b"));
  EXPECT_THAT(g.nodes[1].inputs, ElementsAre("max.part1_output", "c"));
  EXPECT_EQ(g.nodes[2].op_type, "Transpose");
  EXPECT_FALSE(g.nodes[3].attributes.contains("transA"));
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->shapes.at("m").dims, ElementsAre(2, 3));
  EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(2, 5));
}

// ConvTranspose stride 2, pads 1, output_padding 1 on [1, 2, 3, 3]: a Conv
// of the input spread to 5x5 and padded by 1 and 2, weights flipped with
// their channel axes swapped; the output is 6x6 as ONNX defines it.
TEST(CompleteShapesTest, ConvTransposeBecomesAConvOfTheSpreadInput) {
  Graph g;
  g.inputs = {"x"};
  g.shapes["x"] = {kOnnxFloat, {1, 2, 3, 3}};
  std::vector<float> w(2 * 4 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  g.constants["w"] = Floats({2, 4, 3, 3}, w);
  g.shapes["w"] = g.constants["w"].shape;
  GraphNode t{"up", "ConvTranspose", {"x", "w"}, {"y"}};
  t.attributes["strides"] = {2, 2};
  t.attributes["pads"] = {1, 1, 1, 1};
  t.attributes["output_padding"] = {1, 1};
  g.nodes.push_back(t);
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op_type, kDilateOp);
  EXPECT_EQ(g.nodes[0].attributes["pads"], nlohmann::json({1, 1, 2, 2}));
  EXPECT_EQ(g.nodes[1].op_type, "Conv");
  EXPECT_EQ(g.nodes[1].name, "up");
  const ConstantTensor& flipped = g.constants.at("up.weight_flipped");
  EXPECT_THAT(flipped.shape.dims, ElementsAre(4, 2, 3, 3));
  // W'[k=1, c=0, 0, 0] = W[c=0, k=1, 2, 2].
  EXPECT_EQ(flipped.f32[(1 * 2 + 0) * 9], w[(0 * 4 + 1) * 9 + 8]);
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->shapes.at("up.spread_output").dims, ElementsAre(1, 2, 8, 8));
  EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(1, 4, 6, 6));
}

TEST(CompleteShapesTest, UnknownShapeSaysWhereInferenceStops) {
  Graph g;
  g.inputs = {"x"};
  g.shapes["x"] = {kOnnxFloat, {2, 3}};
  g.nodes.push_back({"relu", "Relu", {"x"}, {"r"}});
  g.nodes.push_back({"mystery", "NotAnOnnxOp", {"r"}, {"m"}});
  g.nodes.push_back({"neg", "Neg", {"m"}, {"y"}});
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  absl::StatusOr<TensorShape> shape = done->ShapeOf("y", &done->nodes.back());
  ASSERT_FALSE(shape.ok());
  EXPECT_THAT(shape.status().message(),
              HasSubstr("shape inference stops at node 'mystery' (NotAnOnnxOp, input shapes "
                        "[2, 3])"));
}

TEST(CompleteShapesTest, AnMlpOverAConstantTableFolds) {
  // Swin-V2's position bias: MatMul, Relu, MatMul (its batch broadcast),
  // Sigmoid, Clip with its min omitted, Exp; all at load.
  Graph g;
  g.constants["table"] = Floats({1, 2, 2}, {1, -2, 3, 4});
  g.constants["w1"] = Floats({2, 2}, {1, 0, 0, 1});
  g.constants["w2"] = Floats({2, 1}, {1, 1});
  g.constants["hi"] = Floats({}, {0.5f});
  g.nodes.push_back({"mm1", "MatMul", {"table", "w1"}, {"h"}});
  g.nodes.push_back({"relu", "Relu", {"h"}, {"r"}});
  g.nodes.push_back({"mm2", "MatMul", {"r", "w2"}, {"s"}});
  g.nodes.push_back({"sig", "Sigmoid", {"s"}, {"p"}});
  g.nodes.push_back({"clip", "Clip", {"p", "", "hi"}, {"c"}});
  g.nodes.push_back({"exp", "Exp", {"s"}, {"e"}});
  g.outputs = {"c", "e"};
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->nodes.empty());
  EXPECT_THAT(done->constants.at("s").shape.dims, ElementsAre(1, 2, 1));
  EXPECT_THAT(done->constants.at("s").f32, ElementsAre(1, 7));  // relu(1,-2)=1+0; 3+4
  const std::vector<float>& c = done->constants.at("c").f32;
  EXPECT_FLOAT_EQ(c[0], 0.5f);  // sigmoid(1) = 0.73, clipped
  EXPECT_FLOAT_EQ(done->constants.at("e").f32[1], std::exp(7.0f));
}

TEST(CompleteShapesTest, MatMulOfConstantsThatDoNotMultiplyNamesTheNode) {
  Graph g;
  g.constants["a"] = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  g.constants["b"] = Floats({2, 2}, {1, 2, 3, 4});
  g.nodes.push_back({"mm", "MatMul", {"a", "b"}, {"y"}});
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_FALSE(done.ok());
  EXPECT_THAT(done.status().message(), HasSubstr("mm"));
  EXPECT_THAT(done.status().message(), HasSubstr("do not multiply"));
}

}  // namespace
}  // namespace tunefleet
