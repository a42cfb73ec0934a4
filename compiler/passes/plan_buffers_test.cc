// Buffer planning: a relayout step is added once per layout asked for and
// is not what the tensor's readers find; constants start 64-byte aligned.
#include "compiler/passes/plan_buffers.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(PlanBuffersTest, OneRelayoutPerLayoutAndReadersKeepTheProducersBuffer) {
  ModelPlan plan;
  std::vector<float> weights;
  PlanBuffers buffers(&plan, &weights);
  const int blocked = buffers.NewActivation("t", {1, 32, 4, 4}, 16, 4);
  EXPECT_EQ(buffers.Find("t"), blocked);
  absl::StatusOr<int> plain = buffers.Plain(blocked);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NE(*plain, blocked);
  EXPECT_EQ(plan.buffers[*plain].block, 1);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].op, StepOp::kRelayout);
  EXPECT_EQ(buffers.Find("t"), blocked);  // the copy binds nothing
  absl::StatusOr<int> again = buffers.InLayout(blocked, 1, 4);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *plain);
  EXPECT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(*buffers.InLayout(blocked, 16, 4), blocked);  // already so: no step
  EXPECT_FALSE(buffers.InLayout(buffers.NewBuffer("flat", 8), 16, 8).ok());
}

TEST(PlanBuffersTest, ViewsShareTheirRootsFloats) {
  ModelPlan plan;
  std::vector<float> weights;
  PlanBuffers buffers(&plan, &weights);
  const int nchw64c = buffers.NewActivation("x", {1, 64, 4, 4}, 64, 4);
  const int nhwc = buffers.NewView("x_nhwc", nchw64c, {1, 4, 4, 64}, 1, 0);
  EXPECT_EQ(plan.buffers[nhwc].alias_of, nchw64c);
  EXPECT_EQ(plan.buffers[nhwc].elements, plan.buffers[nchw64c].elements);
  EXPECT_EQ(buffers.Find("x_nhwc"), nhwc);
  // A view of a view is one of the root, so no alias chains.
  const int back = buffers.NewView("y", nhwc, {1, 64, 4, 4}, 64, 4);
  EXPECT_EQ(plan.buffers[back].alias_of, nchw64c);
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_TRUE(ModelPlan::FromJson(plan.ToJson().dump()).ok());
}

TEST(PlanBuffersTest, ConstantsStartAligned) {
  ModelPlan plan;
  std::vector<float> weights;
  PlanBuffers buffers(&plan, &weights);
  const int a = buffers.AddConstant("a", {1, 2, 3});
  const int b = buffers.AddConstant("b", {4});
  EXPECT_EQ(plan.buffers[a].constant_offset, 0);
  EXPECT_EQ(plan.buffers[b].constant_offset, 16);
  EXPECT_EQ(weights[16], 4);
  EXPECT_EQ(buffers.Find("a"), -1);  // constants are not activations readers find by name
}

}  // namespace
}  // namespace tunefleet
