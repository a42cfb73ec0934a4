// Where with a constant condition and one constant side becomes a select
// of the run-time operand and a fill (NaN where the operand is kept); other
// Wheres are left alone, and a NaN to fill with is refused by name.
#include "compiler/passes/lower_where.h"

#include <cmath>
#include <limits>

#include "compiler/tensor_op_lowering.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// scores [1, 2, 2] (run time), a causal mask [2, 2] and a scalar fill.
Graph MaskGraph(bool scores_first, float fill) {
  Graph g;
  g.inputs = {"scores"};
  g.shapes["scores"] = {kOnnxFloat, {1, 2, 2}};
  ConstantTensor& mask = g.constants["mask"];
  mask.shape = {kOnnxBool, {2, 2}};
  mask.i64 = {1, 0, 1, 1};
  ConstantTensor& value = g.constants["value"];
  value.shape = {kOnnxFloat, {}};
  value.f32 = {fill};
  GraphNode where{"w", "Where", {"mask", "scores", "value"}, {"y"}};
  if (!scores_first) where.inputs = {"mask", "value", "scores"};
  g.nodes.push_back(where);
  g.outputs = {"y"};
  return g;
}

TEST(LowerWhereTest, MaskedFillBecomesASelectOfTheScores) {
  const float inf = std::numeric_limits<float>::infinity();
  Graph g = MaskGraph(/*scores_first=*/true, -inf);
  ASSERT_TRUE(LowerConstantWheres(&g).ok());
  const GraphNode& node = g.nodes[0];
  EXPECT_EQ(node.op_type, kSelectOp);
  ASSERT_THAT(node.inputs, ElementsAre("scores", "w.fill"));
  const ConstantTensor& fill = g.constants.at("w.fill");
  EXPECT_THAT(fill.shape.dims, ElementsAre(2, 2));
  // Kept where the mask is true (NaN), -inf where it is false.
  EXPECT_TRUE(std::isnan(fill.f32[0]));
  EXPECT_EQ(fill.f32[1], -inf);
  EXPECT_TRUE(std::isnan(fill.f32[2]) && std::isnan(fill.f32[3]));
}

TEST(LowerWhereTest, ConstantFirstFillsWhereTheConditionHolds) {
  Graph g = MaskGraph(/*scores_first=*/false, -3.0f);
  ASSERT_TRUE(LowerConstantWheres(&g).ok());
  ASSERT_THAT(g.nodes[0].inputs, ElementsAre("scores", "w.fill"));
  const std::vector<float>& fill = g.constants.at("w.fill").f32;
  EXPECT_EQ(fill[0], -3.0f);
  EXPECT_TRUE(std::isnan(fill[1]));
  EXPECT_EQ(fill[2], -3.0f);
}

TEST(LowerWhereTest, OtherWheresAreLeftAndANanFillIsRefused) {
  Graph g = MaskGraph(true, 0.0f);
  g.nodes[0].inputs = {"mask", "scores", "scores"};  // two run-time sides
  ASSERT_TRUE(LowerConstantWheres(&g).ok());
  EXPECT_EQ(g.nodes[0].op_type, "Where");
  g = MaskGraph(true, std::numeric_limits<float>::quiet_NaN());
  const absl::Status status = LowerConstantWheres(&g);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("node 'w'"));
  EXPECT_THAT(status.message(), HasSubstr("NaN"));
}

}  // namespace
}  // namespace tunefleet
