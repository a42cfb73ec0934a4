// A strided copy reading another's output reads that copy's input instead
// and computes the same floats: a slice of the fused q/k/v projection then
// its transpose into heads, and a transpose of a transpose. Left as two
// where the intermediate has another reader or is the model's output, or
// where the second copy's axis would carry across the first's output axes.
// An element-wise step's first operand is read the same way (q's heads
// divided by sqrt(d)).
#include "compiler/passes/compose_strided_copies.h"

#include <vector>

#include "compiler/passes/plan_steps_testing.h"
#include "compiler/runtime/ops.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// qkv [S=6, 1, 3 * D] with D = 8 (2 heads of 4); k = qkv[:, :, 8:16]
// ([6, 1, 8]); heads = k viewed as [6, 2, 4] transposed to [2, 6, 4].
ModelPlan SliceThenHeads() {
  ModelPlan plan;
  plan.buffers = {PlainBuffer("qkv", {6, 1, 24}), PlainBuffer("k", {6, 1, 8}),
                  PlainBuffer("heads", {2, 6, 4})};
  plan.inputs = {{"qkv", 0, {6, 1, 24}}};
  plan.outputs = {{"heads", 2, {2, 6, 4}}};
  plan.steps = {StridedCopyOf(0, 1, {6, 1, 8}, {24, 24, 1}, 8),
                StridedCopyOf(1, 2, {2, 6, 4}, {4, 8, 1})};
  return plan;
}

std::vector<float> RunPlan(const ModelPlan& plan, const std::vector<float>& input) {
  std::vector<std::vector<float>> buffers;
  for (const PlanBuffer& b : plan.buffers) buffers.emplace_back(b.elements, -1.0f);
  buffers[0] = input;
  for (const PlanStep& step : plan.steps) {
    std::vector<const float*> in;
    for (int id : step.inputs) in.push_back(buffers[id].data());
    RunTensorOp(step, in, buffers[step.outputs[0]].data(),
                static_cast<int64_t>(buffers[step.outputs[0]].size()), &kSerialRuntime);
  }
  return buffers[plan.outputs[0].buffer];
}

std::vector<float> Counting(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(ComposeStridedCopiesTest, TheSecondCopyReadsTheFirstOnesInput) {
  const ModelPlan before = SliceThenHeads();
  ModelPlan after = before;
  ASSERT_EQ(ComposeStridedCopies(&after), 1);
  ASSERT_EQ(after.steps.size(), 1u);
  EXPECT_EQ(after.steps[0].inputs, std::vector<int>{0});
  EXPECT_EQ(after.steps[0].a_strides, (std::vector<int64_t>{4, 24, 1}));
  EXPECT_EQ(after.steps[0].a_offset, 8);
  const std::vector<float> x = Counting(6 * 24);
  EXPECT_EQ(RunPlan(after, x), RunPlan(before, x));

  // A transpose of a transpose ([3, 4, 5] -> [5, 3, 4] -> [4, 5, 3]).
  ModelPlan twice;
  twice.buffers = {PlainBuffer("x", {3, 4, 5}), PlainBuffer("t", {5, 3, 4}),
                   PlainBuffer("y", {4, 5, 3})};
  twice.inputs = {{"x", 0, {3, 4, 5}}};
  twice.outputs = {{"y", 2, {4, 5, 3}}};
  twice.steps = {StridedCopyOf(0, 1, {5, 3, 4}, {1, 20, 5}),
                 StridedCopyOf(1, 2, {4, 5, 3}, {1, 12, 4})};
  ModelPlan one = twice;
  ASSERT_EQ(ComposeStridedCopies(&one), 1);
  EXPECT_EQ(one.steps[0].a_strides, (std::vector<int64_t>{5, 1, 20}));
  EXPECT_EQ(RunPlan(one, Counting(60)), RunPlan(twice, Counting(60)));
}

// q = qkv[:, :, 0:8] in heads [2, 6, 4], then q / 2 (a scalar constant,
// stride 0 on every axis): the division reads qkv through the composed
// strides and the copy goes. Not where q has another reader.
TEST(ComposeStridedCopiesTest, AnElementwiseStepReadsItsFirstOperandThroughTheCopy) {
  ModelPlan before;
  before.buffers = {PlainBuffer("qkv", {6, 1, 24}), PlainBuffer("q", {2, 6, 4}),
                    PlainBuffer("two", {1}), PlainBuffer("scaled", {2, 6, 4})};
  before.buffers[2].constant_offset = 0;
  before.inputs = {{"qkv", 0, {6, 1, 24}}};
  before.outputs = {{"scaled", 3, {2, 6, 4}}};
  PlanStep divide = StepOf(StepOp::kBroadcast, {1, 2}, 3);
  divide.binary = BinaryFunc::kDiv;
  divide.out_shape = {2, 6, 4};
  divide.a_strides = {24, 4, 1};
  divide.b_strides = {0, 0, 0};
  before.steps = {StridedCopyOf(0, 1, {2, 6, 4}, {4, 24, 1}), divide};

  auto run = [](const ModelPlan& plan) {
    std::vector<std::vector<float>> buffers;
    for (const PlanBuffer& b : plan.buffers) buffers.emplace_back(b.elements, -1.0f);
    buffers[0] = Counting(6 * 24);
    buffers[2] = {2.0f};
    for (const PlanStep& step : plan.steps) {
      std::vector<const float*> in;
      for (int id : step.inputs) in.push_back(buffers[id].data());
      RunTensorOp(step, in, buffers[step.outputs[0]].data(),
                  static_cast<int64_t>(buffers[step.outputs[0]].size()), &kSerialRuntime);
    }
    return buffers[3];
  };
  ModelPlan after = before;
  ASSERT_EQ(ComposeStridedCopies(&after), 1);
  ASSERT_EQ(after.steps.size(), 1u);
  EXPECT_EQ(after.steps[0].op, StepOp::kBroadcast);
  EXPECT_EQ(after.steps[0].inputs, (std::vector<int>{0, 2}));
  EXPECT_EQ(after.steps[0].a_strides, (std::vector<int64_t>{4, 24, 1}));
  const std::vector<float> expected = run(before);
  EXPECT_EQ(run(after), expected);
  EXPECT_EQ(expected[5], (24.0f + 1.0f) / 2.0f);  // head 0, token 1, position 1

  ModelPlan shared = before;  // q is read by another step too
  shared.buffers.push_back(PlainBuffer("q2", {2, 6, 4}));
  shared.steps.push_back(StridedCopyOf(1, 4, {2, 6, 4}, {24, 4, 1}));
  EXPECT_EQ(ComposeStridedCopies(&shared), 0);
}

TEST(ComposeStridedCopiesTest, KeepsBothWhereTheIntermediateIsNeededOrAnAxisCarries) {
  {  // k read by another step too
    ModelPlan plan = SliceThenHeads();
    plan.buffers.push_back(PlainBuffer("k2", {6, 1, 8}));
    plan.steps.push_back(StridedCopyOf(1, 3, {6, 1, 8}, {8, 8, 1}));
    EXPECT_EQ(ComposeStridedCopies(&plan), 0);
  }
  {  // k is a model output
    ModelPlan plan = SliceThenHeads();
    plan.outputs.push_back({"k", 1, {6, 1, 8}});
    EXPECT_EQ(ComposeStridedCopies(&plan), 0);
  }
  {  // a transpose [3, 4] -> [4, 3] read back flat: 12 steps of 1 carry
    ModelPlan plan;
    plan.buffers = {PlainBuffer("x", {3, 4}), PlainBuffer("t", {4, 3}), PlainBuffer("y", {12})};
    plan.inputs = {{"x", 0, {3, 4}}};
    plan.outputs = {{"y", 2, {12}}};
    plan.steps = {StridedCopyOf(0, 1, {4, 3}, {1, 4}), StridedCopyOf(1, 2, {12}, {1})};
    EXPECT_EQ(ComposeStridedCopies(&plan), 0);
  }
}

}  // namespace
}  // namespace tunefleet
