// A squeeze-excite scale read only by a blocked, ungrouped convolution
// becomes a scale of that kernel's packed weights; one with another reader
// (another step, or the kernel's own epilogue), at batch 2, before a
// grouped kernel, before weights larger than the activation or whose
// product is the model's output stays a channel Mul.
#include "compiler/passes/fold_channel_scales.h"

#include "compiler/passes/plan_steps_testing.h"
#include "compiler/runtime/model_runtime.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

PlanBuffer Blocked(const char* name, int64_t channels, int64_t side, int64_t block) {
  PlanBuffer b;
  b.tensor = name;
  b.elements = channels * side * side;
  b.shape = {1, channels, side, side};
  b.block = block;
  return b;
}

PlanBuffer Constant(const char* name, int64_t elements, int64_t offset) {
  PlanBuffer b;
  b.tensor = name;
  b.elements = elements;
  b.constant_offset = offset;
  return b;
}

// input -> kernel -> x [1,32,16,16]/8c; s [1,32]; x * s -> p; a 1x1
// convolution 32 -> 16 channels (out 16c) reads p: weights 512 floats
// against x's 8192.
ModelPlan SqueezeExcitePlan() {
  ModelPlan plan;
  PlanBuffer s;
  s.tensor = "s";
  s.elements = 32;
  s.shape = {1, 32};
  plan.buffers = {Blocked("input", 32, 16, 8), Blocked("x", 32, 16, 8),   s,
                  Blocked("p", 32, 16, 8),     Constant("w", 16 * 32, 0), Blocked("y", 16, 16, 16)};
  plan.weight_floats = 16 * 32;
  plan.inputs = {{"input", 0, {1, 32, 16, 16}}};
  plan.outputs = {{"y", 5, {1, 16, 16, 16}}};
  PlanStep mul = StepOf(StepOp::kChannelBinary, {1, 2}, 3);
  mul.binary = BinaryFunc::kMul;
  mul.in_shape = {1, 32};
  mul.node = "mul";
  PlanStep conv = StepOf(StepOp::kKernel, {3, 4}, 5);
  conv.staged = {3, 4, 5};
  conv.kernel_shape = {1, 1, 8};
  plan.steps = {StepOf(StepOp::kKernel, {0}, 1), StepOf(StepOp::kPointwise, {0}, 2), mul, conv};
  return plan;
}

TEST(FoldChannelScalesTest, TheConvolutionReadsXAndItsWeightsScaled) {
  ModelPlan plan = SqueezeExcitePlan();
  EXPECT_EQ(FoldChannelScales(&plan), 1);
  ASSERT_EQ(plan.steps.size(), 4u);
  const PlanStep& scale = plan.steps[2];
  EXPECT_EQ(scale.op, StepOp::kScaleWeights);
  EXPECT_EQ(scale.node, "mul");
  EXPECT_EQ(scale.inputs, (std::vector<int>{4, 2}));
  ASSERT_EQ(scale.outputs.size(), 1u);
  const int scaled = scale.outputs[0];
  EXPECT_EQ(plan.buffers[scaled].elements, 512);
  EXPECT_FALSE(plan.buffers[scaled].is_constant());
  // {K/ob, C/ib, R*S, ib, ob}: out blocks of 16, x's blocks of 8.
  EXPECT_EQ(scale.in_shape, (std::vector<int64_t>{1, 4, 1, 8, 16}));
  EXPECT_EQ(plan.steps[3].inputs, (std::vector<int>{1, scaled}));
  EXPECT_EQ(plan.steps[3].staged, (std::vector<int>{1, scaled, 5}));
  // The plan still loads (its JSON) and places every buffer.
  absl::StatusOr<ModelPlan> again = ModelPlan::FromJson(plan.ToJson().dump());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->steps[2].op, StepOp::kScaleWeights);
  int64_t floats = 0;
  const std::vector<int64_t> offsets = PlanArena(plan, &floats);
  EXPECT_GE(offsets[scaled], 0);
}

// A kernel reading x's 16-channel blocks in place with weights packed in
// blocks of 8 (kernel_packing.h ReadsBlockAtNoCost): the weights are
// scaled in their own blocks, not x's.
TEST(FoldChannelScalesTest, TheWeightsAreScaledInTheirOwnInputChannelBlocks) {
  ModelPlan plan = SqueezeExcitePlan();
  for (int id : {0, 1, 3}) plan.buffers[id] = Blocked(plan.buffers[id].tensor.c_str(), 32, 16, 16);
  EXPECT_EQ(FoldChannelScales(&plan), 1);
  EXPECT_EQ(plan.steps[2].in_shape, (std::vector<int64_t>{1, 4, 1, 8, 16}));
}

TEST(FoldChannelScalesTest, WhatItCannotFoldStaysAChannelMul) {
  {  // the product has a second reader
    ModelPlan plan = SqueezeExcitePlan();
    plan.buffers.push_back(Blocked("z", 32, 16, 8));
    plan.steps.push_back(StepOf(StepOp::kPointwise, {3}, 6));
    EXPECT_EQ(FoldChannelScales(&plan), 0);
  }
  {  // a scale per image of a batch of 2
    ModelPlan plan = SqueezeExcitePlan();
    plan.steps[2].in_shape = {2, 32};
    EXPECT_EQ(FoldChannelScales(&plan), 0);
  }
  {  // a grouped kernel: fewer weights than K x C x R x S
    ModelPlan plan = SqueezeExcitePlan();
    plan.buffers[4].elements = 16 * 16;
    EXPECT_EQ(FoldChannelScales(&plan), 0);
  }
  {  // a 3x3 kernel whose 16 x 32 x 9 x ... weights outnumber x: a 2x2 image
    ModelPlan plan = SqueezeExcitePlan();
    for (int id : {0, 1, 3}) plan.buffers[id] = Blocked(plan.buffers[id].tensor.c_str(), 32, 2, 8);
    plan.buffers[4].elements = 16 * 32 * 9;
    plan.weight_floats = 16 * 32 * 9;
    plan.steps[3].kernel_shape = {3, 3, 8};
    EXPECT_EQ(FoldChannelScales(&plan), 0);
  }
  {  // the product is the model's output too
    ModelPlan plan = SqueezeExcitePlan();
    plan.outputs.push_back({"p", 3, {1, 32, 16, 16}});
    EXPECT_EQ(FoldChannelScales(&plan), 0);
  }
  {  // the kernel's epilogue adds the product back (a residual)
    ModelPlan plan = SqueezeExcitePlan();
    plan.steps[3].epilogue.residual = 3;
    EXPECT_EQ(FoldChannelScales(&plan), 0);
  }
  {  // a channel Add, not a Mul
    ModelPlan plan = SqueezeExcitePlan();
    plan.steps[2].binary = BinaryFunc::kAdd;
    EXPECT_EQ(FoldChannelScales(&plan), 0);
  }
}

}  // namespace
}  // namespace tunefleet
