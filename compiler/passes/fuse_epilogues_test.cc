// Epilogue fusion on small graphs: a residual Add and an activation fuse
// into the kernel before them, a dense kernel's constant bias row folds, and
// fusion stops where a tensor has another reader or is not ready yet.
#include "compiler/passes/fuse_epilogues.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// conv1: x -> a; conv2: a -> b; Add(b, a) -> s; act -> y.
Graph Residual(const std::string& activation) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  for (const char* t : {"x", "a", "b", "s", "y"}) g.shapes[t] = {kOnnxFloat, {1, 4, 3, 3}};
  g.nodes.push_back({"conv1", "Conv", {"x", "w1"}, {"a"}});
  g.nodes.push_back({"conv2", "Conv", {"a", "w2"}, {"b"}});
  g.nodes.push_back({"add", "Add", {"b", "a"}, {"s"}});
  GraphNode act{"act", activation, {"s"}, {"y"}};
  if (activation == "LeakyRelu") act.attributes["alpha"] = 0.25;
  g.nodes.push_back(act);
  return g;
}

const std::map<std::string, EpilogueKind> kConvs = {{"conv1", EpilogueKind::kChannels},
                                                    {"conv2", EpilogueKind::kChannels}};

TEST(FuseEpiloguesTest, ResidualAndActivationFuseIntoTheKernel) {
  absl::StatusOr<EpilogueFusion> fusion = FuseEpilogues(Residual("LeakyRelu"), kConvs);
  ASSERT_TRUE(fusion.ok()) << fusion.status();
  const FusedEpilogue& e = fusion->by_kernel.at("conv2");
  EXPECT_EQ(e.output, "y");
  EXPECT_EQ(e.residual, "a");
  EXPECT_EQ(e.activation.func, PointwiseFunc::kLeakyRelu);
  EXPECT_FLOAT_EQ(e.activation.alpha, 0.25f);
  EXPECT_THAT(fusion->fused_nodes, ElementsAre(2u, 3u));
  // conv1's output has two readers: nothing fuses into it.
  EXPECT_EQ(fusion->by_kernel.at("conv1").output, "a");
}

TEST(FuseEpiloguesTest, NothingFusesIntoABatchedMatmulOrAfterAnUnfusableNode) {
  auto kinds = kConvs;
  kinds["conv2"] = EpilogueKind::kNone;
  absl::StatusOr<EpilogueFusion> fusion = FuseEpilogues(Residual("Relu"), kinds);
  ASSERT_TRUE(fusion.ok());
  EXPECT_THAT(fusion->fused_nodes, IsEmpty());
  fusion = FuseEpilogues(Residual("Softmax"), kConvs);
  ASSERT_TRUE(fusion.ok());
  EXPECT_THAT(fusion->fused_nodes, ElementsAre(2u));  // the Add, not the Softmax
}

// A residual computed after the kernel (by a node later in the graph) can
// not be added in the kernel's epilogue.
TEST(FuseEpiloguesTest, AResidualNotReadyYetIsNotFused) {
  Graph g = Residual("Relu");
  g.nodes[2].inputs = {"b", "late"};
  g.shapes["late"] = g.shapes["x"];
  g.nodes.insert(g.nodes.begin() + 3, {"late", "Relu", {"x"}, {"late"}});
  absl::StatusOr<EpilogueFusion> fusion = FuseEpilogues(g, kConvs);
  ASSERT_TRUE(fusion.ok());
  EXPECT_EQ(fusion->by_kernel.at("conv2").output, "b");
}

TEST(FuseEpiloguesTest, ADenseKernelFoldsItsConstantBiasRow) {
  Graph g;
  g.inputs = {"x"};
  g.outputs = {"y"};
  for (const char* t : {"x", "m", "y"}) g.shapes[t] = {kOnnxFloat, {2, 3}};
  g.constants["row"].shape = {kOnnxFloat, {3}};
  g.constants["row"].f32 = {1, 2, 3};
  g.nodes.push_back({"mm", "MatMul", {"x", "w"}, {"m"}});
  g.nodes.push_back({"bias", "Add", {"m", "row"}, {"y"}});
  absl::StatusOr<EpilogueFusion> fusion = FuseEpilogues(g, {{"mm", EpilogueKind::kRows}});
  ASSERT_TRUE(fusion.ok());
  EXPECT_THAT(fusion->by_kernel.at("mm").bias_rows, ElementsAre("row"));
  EXPECT_EQ(fusion->by_kernel.at("mm").output, "y");
  fusion = FuseEpilogues(g, {{"mm", EpilogueKind::kChannels}});
  ASSERT_TRUE(fusion.ok());
  EXPECT_THAT(fusion->fused_nodes, IsEmpty());
}

// An encoder's out-projection: Gemm [S, D] -> Reshape [S, 1, D] ->
// Transpose (1, 0, 2) [1, S, D] -> Add(x, .): the two views keep the
// rows' order, so the residual fuses into the dense kernel, which writes
// the transposed tensor. A Transpose that reorders rows, or views with
// nothing to fuse after them, stay as they are.
Graph OutProjection(std::vector<int64_t> perm, bool add_after) {
  Graph g;
  g.inputs = {"x", "h"};
  g.outputs = {add_after ? "y" : "t"};
  g.shapes["h"] = {kOnnxFloat, {8, 16}};
  g.shapes["p"] = {kOnnxFloat, {8, 16}};
  g.shapes["r"] = {kOnnxFloat, {8, 1, 16}};
  const bool moves_rows = perm != std::vector<int64_t>{1, 0, 2};
  g.shapes["t"] = {kOnnxFloat,
                   moves_rows ? std::vector<int64_t>{1, 16, 8} : std::vector<int64_t>{1, 8, 16}};
  g.shapes["x"] = g.shapes["t"];
  g.shapes["y"] = g.shapes["t"];
  g.nodes.push_back({"gemm", "Gemm", {"h", "w"}, {"p"}});
  g.nodes.push_back({"reshape", "Reshape", {"p", "shape"}, {"r"}});
  GraphNode transpose{"transpose", "Transpose", {"r"}, {"t"}};
  transpose.attributes["perm"] = perm;
  g.nodes.push_back(transpose);
  if (add_after) g.nodes.push_back({"add", "Add", {"x", "t"}, {"y"}});
  return g;
}

TEST(FuseEpiloguesTest, AResidualFusesThroughViewsThatKeepTheRowsOrder) {
  const std::map<std::string, EpilogueKind> dense = {{"gemm", EpilogueKind::kRows}};
  absl::StatusOr<EpilogueFusion> fusion = FuseEpilogues(OutProjection({1, 0, 2}, true), dense);
  ASSERT_TRUE(fusion.ok()) << fusion.status();
  EXPECT_EQ(fusion->by_kernel.at("gemm").output, "y");
  EXPECT_EQ(fusion->by_kernel.at("gemm").residual, "x");
  EXPECT_THAT(fusion->fused_nodes, ElementsAre(1u, 2u, 3u));
  // [8, 1, 16] -> [1, 16, 8]: rows transposed, not a view.
  fusion = FuseEpilogues(OutProjection({1, 2, 0}, true), dense);
  ASSERT_TRUE(fusion.ok());
  EXPECT_THAT(fusion->fused_nodes, IsEmpty());
  EXPECT_EQ(fusion->by_kernel.at("gemm").output, "p");
  // Nothing to fuse after the views: the kernel keeps its own output.
  fusion = FuseEpilogues(OutProjection({1, 0, 2}, false), dense);
  ASSERT_TRUE(fusion.ok());
  EXPECT_THAT(fusion->fused_nodes, IsEmpty());
  // A convolution's output (channels, blocked) is never seen through views.
  fusion = FuseEpilogues(OutProjection({1, 0, 2}, true), {{"gemm", EpilogueKind::kChannels}});
  ASSERT_TRUE(fusion.ok());
  EXPECT_THAT(fusion->fused_nodes, IsEmpty());
}

}  // namespace
}  // namespace tunefleet
