#include "tuner_core/graph/task_extraction.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

Graph WithShapes(std::map<std::string, std::vector<int64_t>> shapes) {
  Graph g;
  for (auto& [name, dims] : shapes) g.shapes[name] = TensorShape{kOnnxFloat, dims};
  return g;
}

GraphNode Node(std::string op, std::string name, std::vector<std::string> inputs,
               nlohmann::json attributes = nlohmann::json::object()) {
  return GraphNode{
      std::move(name), std::move(op), std::move(inputs), {"out"}, std::move(attributes)};
}

TEST(TaskExtractionTest, DepthwiseAndGroupedConvolutions) {
  Graph g = WithShapes({{"x", {1, 32, 56, 56}},
                        {"dw", {32, 1, 3, 3}},
                        {"dw2", {64, 1, 3, 3}},
                        {"grouped", {32, 16, 3, 3}}});
  g.nodes = {Node("Conv", "dw", {"x", "dw"}, {{"group", 32}, {"pads", {1, 1, 1, 1}}}),
             Node("Conv", "mult2", {"x", "dw2"}, {{"group", 32}}),
             Node("Conv", "g2", {"x", "grouped"}, {{"group", 2}})};
  absl::StatusOr<GraphLayers> layers = ExtractLayers(g);
  ASSERT_TRUE(layers.ok()) << layers.status();
  ASSERT_EQ(layers->layers.size(), 3u);
  EXPECT_EQ(layers->layers[0].workload, "depthwise_conv2d_nchw");
  EXPECT_FALSE(layers->layers[0].args.contains("K"));
  // A channel multiplier of 2 and two groups: the grouped conv2d.
  EXPECT_EQ(layers->layers[1].workload, "conv2d_nchw");
  EXPECT_EQ(layers->layers[1].args["group"], 32);
  EXPECT_EQ(layers->layers[1].args["K"], 64);
  EXPECT_EQ(layers->layers[2].workload, "conv2d_nchw");
  EXPECT_EQ(layers->layers[2].args["group"], 2);
  EXPECT_TRUE(layers->untuned.empty());
}

TEST(TaskExtractionTest, SameUpperPaddingIsResolved) {
  Graph g = WithShapes({{"x", {1, 3, 224, 224}}, {"w", {64, 3, 7, 7}}});
  g.nodes = {Node("Conv", "stem", {"x", "w"}, {{"auto_pad", "SAME_UPPER"}, {"strides", {2, 2}}})};
  absl::StatusOr<GraphLayers> layers = ExtractLayers(g);
  ASSERT_TRUE(layers.ok()) << layers.status();
  // out 112: total pad = 111*2 + 7 - 224 = 5 -> 2 before, 3 after.
  EXPECT_EQ(layers->layers[0].args["pad_top"], 2);
  EXPECT_EQ(layers->layers[0].args["pad_bottom"], 3);
}

TEST(TaskExtractionTest, MatMulKinds) {
  Graph g = WithShapes({{"x", {1, 128, 768}},
                        {"w", {768, 3072}},
                        {"q", {1, 12, 128, 64}},
                        {"kt", {1, 12, 64, 128}},
                        {"kb", {12, 64, 128}},
                        {"v", {768}}});
  g.nodes = {Node("MatMul", "ff", {"x", "w"}), Node("MatMul", "scores", {"q", "kt"}),
             Node("MatMul", "broadcast", {"q", "kb"}), Node("MatMul", "gemv", {"x", "v"})};
  absl::StatusOr<GraphLayers> layers = ExtractLayers(g);
  ASSERT_TRUE(layers.ok()) << layers.status();
  ASSERT_EQ(layers->layers.size(), 2u);
  EXPECT_EQ(layers->layers[0].args,
            nlohmann::json({{"M", 128}, {"N", 3072}, {"K", 768}, {"layout", "NK"}}));
  EXPECT_EQ(layers->layers[1].workload, "batch_matmul");
  EXPECT_EQ(layers->layers[1].args,
            nlohmann::json({{"B", 12}, {"M", 128}, {"N", 128}, {"K", 64}, {"layout", "KN"}}));
  ASSERT_EQ(layers->untuned.size(), 2u);
  EXPECT_THAT(layers->untuned[0].reason, HasSubstr("broadcasting"));
  EXPECT_THAT(layers->untuned[1].reason, HasSubstr("1-D operand"));
}

TEST(TaskExtractionTest, GemmOrientationAndErrors) {
  Graph g = WithShapes({{"a", {1, 512}}, {"b_kn", {512, 1000}}, {"b_bad", {100, 1000}}});
  g.nodes = {Node("Gemm", "fc", {"a", "b_kn"})};
  absl::StatusOr<GraphLayers> layers = ExtractLayers(g);
  ASSERT_TRUE(layers.ok()) << layers.status();
  EXPECT_EQ(layers->layers[0].args["N"], 1000);
  EXPECT_EQ(layers->layers[0].args["K"], 512);

  g.nodes = {Node("Gemm", "bad", {"a", "b_bad"})};
  layers = ExtractLayers(g);
  ASSERT_FALSE(layers.ok());
  EXPECT_THAT(layers.status().message(), HasSubstr("Gemm node 'bad'"));

  g.nodes = {Node("Gemm", "missing", {"a", "nowhere"})};
  layers = ExtractLayers(g);
  ASSERT_FALSE(layers.ok());
  EXPECT_THAT(layers.status().message(),
              HasSubstr("tensor 'nowhere' (input of node 'missing', Gemm)"));
}

TEST(TaskExtractionTest, NonFloatIsRefusedByName) {
  Graph g = WithShapes({{"w", {16, 8, 3, 3}}});
  g.shapes["x"] = TensorShape{kOnnxInt64, {1, 8, 16, 16}};
  g.nodes = {Node("Conv", "intconv", {"x", "w"})};
  absl::StatusOr<GraphLayers> layers = ExtractLayers(g);
  ASSERT_FALSE(layers.ok());
  EXPECT_THAT(layers.status().message(), HasSubstr("node 'intconv'"));
}

TEST(TaskExtractionTest, GroupLayersCountsNamesAndShares) {
  std::vector<ModelLayer> layers = {
      {"dense", {{"M", 1}, {"N", 10}, {"K", 10}, {"layout", "NK"}}, "a"},
      {"dense", {{"M", 1}, {"N", 10}, {"K", 10}, {"layout", "NK"}}, "b"},
      {"dense", {{"M", 1}, {"N", 20}, {"K", 10}, {"layout", "NK"}}, "c"}};
  std::vector<ModelTask> tasks = GroupLayers(layers);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].num_layers, 2);
  EXPECT_EQ(tasks[0].layer_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_DOUBLE_EQ(tasks[0].flops_share, 0.5);
  EXPECT_DOUBLE_EQ(tasks[1].flops_share, 0.5);
}

}  // namespace
}  // namespace tunefleet
