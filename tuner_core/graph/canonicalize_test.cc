// Canonicalize's rewrites of Einsum and the norm reductions, node by node,
// and their shapes once completed; the refusals name the equation and why.
#include "tuner_core/graph/canonicalize.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/graph/infer_shapes.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A graph of one Einsum of graph inputs with these shapes.
Graph EinsumGraph(const std::string& equation, const std::vector<std::vector<int64_t>>& dims) {
  Graph g;
  GraphNode node{"e", "Einsum", {}, {"y"}};
  for (size_t i = 0; i < dims.size(); ++i) {
    const std::string name = "x" + std::to_string(i);
    g.inputs.push_back(name);
    g.shapes[name] = {kOnnxFloat, dims[i]};
    node.inputs.push_back(name);
  }
  node.attributes["equation"] = equation;
  g.nodes.push_back(node);
  g.outputs = {"y"};
  return g;
}

std::vector<std::string> OpsOf(const Graph& g) {
  std::vector<std::string> ops;
  for (const GraphNode& node : g.nodes) ops.push_back(node.op_type);
  return ops;
}

std::vector<int64_t> PermOf(const GraphNode& node) {
  return node.attributes.at("perm").get<std::vector<int64_t>>();
}

TEST(CanonicalizeTest, AttentionEinsumTransposesOnlyTheKeys) {
  // MaxViT: q [B, G, H, I, D] times k [B, G, H, J, D] -> [B, G, H, I, J].
  Graph g = EinsumGraph("B G H I D, B G H J D -> B G H I J", {{1, 2, 3, 5, 8}, {1, 2, 3, 7, 8}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_THAT(OpsOf(g), ElementsAre("Transpose", "MatMul"));
  EXPECT_THAT(PermOf(g.nodes[0]), ElementsAre(0, 1, 2, 4, 3));
  EXPECT_EQ(g.nodes[0].inputs, std::vector<std::string>{"x1"});
  EXPECT_EQ(g.nodes[1].name, "e");
  EXPECT_THAT(g.nodes[1].inputs, ElementsAre("x0", g.nodes[0].outputs[0]));
  EXPECT_THAT(g.nodes[1].outputs, ElementsAre("y"));
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(1, 2, 3, 5, 7));
}

TEST(CanonicalizeTest, EinsumAlreadyAMatMulNeedsNoTranspose) {
  Graph g = EinsumGraph("bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_THAT(OpsOf(g), ElementsAre("MatMul"));
  EXPECT_THAT(g.nodes[0].inputs, ElementsAre("x0", "x1"));
  // Without a batch index, A's leading indices are MatMul's rows.
  g = EinsumGraph("bij,jk->bik", {{2, 3, 4}, {4, 5}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  EXPECT_THAT(OpsOf(g), ElementsAre("MatMul"));
}

TEST(CanonicalizeTest, EinsumProductTransposedToTheOutputsOrder) {
  Graph g = EinsumGraph("bhid,bhjd->bhji", {{1, 2, 3, 4}, {1, 2, 5, 4}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_THAT(OpsOf(g), ElementsAre("Transpose", "MatMul", "Transpose"));
  EXPECT_THAT(PermOf(g.nodes[2]), ElementsAre(0, 1, 3, 2));
  EXPECT_EQ(g.nodes[2].name, "e");
  EXPECT_THAT(g.nodes[2].outputs, ElementsAre("y"));
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(1, 2, 5, 3));
}

TEST(CanonicalizeTest, ImplicitEinsumOutputIsTheSortedSingleIndices) {
  Graph g = EinsumGraph("kj,ji", {{3, 4}, {4, 5}});  // -> "ik": [5, 3]
  ASSERT_TRUE(Canonicalize(&g).ok());
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(5, 3));
}

TEST(CanonicalizeTest, OneOperandEinsumPermutes) {
  Graph g = EinsumGraph("ijk->kji", {{2, 3, 4}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_THAT(OpsOf(g), ElementsAre("Transpose"));
  EXPECT_THAT(PermOf(g.nodes[0]), ElementsAre(2, 1, 0));
}

TEST(CanonicalizeTest, IndicesOfOneOperandAloneAreSummedFirst) {
  Graph g = EinsumGraph("ij->i", {{3, 4}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_THAT(OpsOf(g), ElementsAre("ReduceSum", "Identity"));
  EXPECT_EQ(g.nodes[0].attributes.at("axes"), nlohmann::json::array({1}));
  EXPECT_EQ(g.nodes[0].attributes.at("keepdims"), 0);
  // k is B's alone: B summed over it, then a matrix-vector product whose
  // unit column is squeezed off.
  g = EinsumGraph("ij,jk->i", {{3, 4}, {4, 5}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  EXPECT_THAT(OpsOf(g), ElementsAre("ReduceSum", "Unsqueeze", "MatMul", "Squeeze", "Identity"));
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(3));
}

TEST(CanonicalizeTest, InnerProductIsAUnitMatMul) {
  Graph g = EinsumGraph("i,i", {{5}, {5}});
  ASSERT_TRUE(Canonicalize(&g).ok());
  ASSERT_THAT(OpsOf(g), ElementsAre("Unsqueeze", "Unsqueeze", "MatMul", "Squeeze", "Identity"));
  EXPECT_EQ(g.nodes[0].attributes.at("axes"), nlohmann::json::array({0}));  // A: [1, 5]
  EXPECT_EQ(g.nodes[1].attributes.at("axes"), nlohmann::json::array({1}));  // B: [5, 1]
  absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->shapes.at("y").dims.empty());
}

TEST(CanonicalizeTest, OtherEinsumsAreRefusedWithTheirEquation) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ii->i", "repeats within an operand"},          {"i,j->ij", "only a batched matrix product"},
      {"ijk,ijk->i", "only a batched matrix product"}, {"...ij,...jk->...ik", "an ellipsis"},
      {"ij,jk,kl->il", "one or two operands"},         {"ij->k", "output index 'k'"},
  };
  for (const auto& [equation, why] : cases) {
    const size_t operands = std::count(equation.begin(), equation.end(), ',') + 1;
    Graph g = EinsumGraph(equation, std::vector<std::vector<int64_t>>(operands, {2, 2}));
    const absl::Status status = Canonicalize(&g);
    ASSERT_FALSE(status.ok()) << equation;
    EXPECT_THAT(status.message(), HasSubstr("node 'e'")) << equation;
    EXPECT_THAT(status.message(), HasSubstr("'" + equation + "'")) << equation;
    EXPECT_THAT(status.message(), HasSubstr(why)) << equation;
  }
}

TEST(CanonicalizeTest, NormReductionsBecomeReduceSums) {
  for (const char* op : {"ReduceL2", "ReduceSumSquare", "ReduceL1"}) {
    Graph g;
    g.inputs = {"x"};
    g.shapes["x"] = {kOnnxFloat, {2, 3, 4}};
    GraphNode reduce{"r", op, {"x"}, {"y"}};
    reduce.attributes["axes"] = std::vector<int64_t>{-1};
    reduce.attributes["keepdims"] = 1;
    g.nodes.push_back(reduce);
    g.outputs = {"y"};
    ASSERT_TRUE(Canonicalize(&g).ok()) << op;
    const std::string square = std::string(op) == "ReduceL1" ? "Abs" : "Mul";
    if (std::string(op) == "ReduceL2") {
      ASSERT_THAT(OpsOf(g), ElementsAre(square, "ReduceSum", "Sqrt"));
      EXPECT_EQ(g.nodes[2].name, "r");
    } else {
      ASSERT_THAT(OpsOf(g), ElementsAre(square, "ReduceSum"));
    }
    EXPECT_EQ(g.nodes[1].attributes.at("axes"), nlohmann::json::array({-1}));
    absl::StatusOr<Graph> done = CompleteShapes(std::move(g));
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_THAT(done->shapes.at("y").dims, ElementsAre(2, 3, 1)) << op;
  }
}

}  // namespace
}  // namespace tunefleet
