// Unread channel gathers go, chains of them included; a gather a step or a
// model output reads stays, and so does every other unread step.
#include "compiler/passes/prune_steps.h"

#include "compiler/passes/plan_steps_testing.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(PruneStepsTest, UnreadGathersGoReadOnesStay) {
  ModelPlan plan;
  plan.steps.push_back(StepOf(StepOp::kChannelGather, {0}, 1));  // read by nothing
  plan.steps.push_back(StepOf(StepOp::kChannelGather, {0}, 2));  // read by the kernel
  plan.steps.push_back(StepOf(StepOp::kKernel, {2}, 3));
  plan.steps.push_back(StepOf(StepOp::kChannelGather, {3}, 4));  // a model output
  plan.steps.push_back(StepOf(StepOp::kRelayout, {3}, 5));       // unread, but not a gather
  plan.steps.push_back(StepOf(StepOp::kChannelGather, {0}, 6));  // read only by the next,
  plan.steps.push_back(StepOf(StepOp::kChannelGather, {6}, 7));  // which nothing reads
  plan.outputs.push_back({"y", 4, {1}});
  DropUnreadChannelGathers(&plan);
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.steps[0].outputs[0], 2);
  EXPECT_EQ(plan.steps[1].op, StepOp::kKernel);
  EXPECT_EQ(plan.steps[2].outputs[0], 4);
  EXPECT_EQ(plan.steps[3].op, StepOp::kRelayout);
}

}  // namespace
}  // namespace tunefleet
