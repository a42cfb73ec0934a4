// An Add of scores and a broadcast bias read only by a last-axis Softmax
// becomes one softmax(x + bias) step computing the same floats, through a
// Reshape's view too and with the bias as the Add's first operand. Left as
// two where the sum has another reader or is the model's output, where the
// softmax runs over another axis, or where the bias is written between.
#include "compiler/passes/fuse_softmax_bias.h"

#include <cmath>
#include <vector>

#include "compiler/passes/plan_steps_testing.h"
#include "compiler/runtime/ops.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// scores [2 windows, 3 queries, 4 keys] + bias [3, 4] (the same for every
// window) -> softmax over the keys.
ModelPlan ScoresPlusBias(bool bias_first = false) {
  ModelPlan plan;
  plan.buffers = {PlainBuffer("scores", {2, 3, 4}), PlainBuffer("bias", {3, 4}),
                  PlainBuffer("sum", {2, 3, 4}), PlainBuffer("probs", {2, 3, 4})};
  plan.inputs = {{"scores", 0, {2, 3, 4}}, {"bias", 1, {3, 4}}};
  plan.outputs = {{"probs", 3, {2, 3, 4}}};
  PlanStep add =
      StepOf(StepOp::kBroadcast, bias_first ? std::vector<int>{1, 0} : std::vector<int>{0, 1}, 2);
  add.binary = BinaryFunc::kAdd;
  add.out_shape = {2, 3, 4};
  add.a_strides = bias_first ? std::vector<int64_t>{0, 4, 1} : std::vector<int64_t>{12, 4, 1};
  add.b_strides = bias_first ? std::vector<int64_t>{12, 4, 1} : std::vector<int64_t>{0, 4, 1};
  PlanStep softmax = StepOf(StepOp::kSoftmax, {2}, 3);
  softmax.in_shape = {6, 4, 1};
  plan.steps = {add, softmax};
  return plan;
}

std::vector<float> RunPlan(const ModelPlan& plan) {
  std::vector<std::vector<float>> buffers;
  for (const PlanBuffer& b : plan.buffers) buffers.emplace_back(b.elements, -1.0f);
  for (int i = 0; i < 24; ++i) buffers[0][i] = std::sin(1.7f * i) * 6;
  for (int i = 0; i < 12; ++i) buffers[1][i] = std::cos(0.9f * i) * 4;
  auto data = [&](int id) {
    const PlanBuffer& b = plan.buffers[id];
    return b.alias_of >= 0 ? buffers[b.alias_of].data() + b.alias_offset : buffers[id].data();
  };
  for (const PlanStep& step : plan.steps) {
    if (step.op == StepOp::kSoftmax) {
      Softmax(step, data(step.inputs[0]), step.inputs.size() > 1 ? data(step.inputs[1]) : nullptr,
              data(step.outputs[0]), &kSerialRuntime);
    } else {
      std::vector<const float*> in;
      for (int id : step.inputs) in.push_back(data(id));
      RunTensorOp(step, in, data(step.outputs[0]), plan.buffers[step.outputs[0]].elements,
                  &kSerialRuntime);
    }
  }
  return buffers[plan.outputs[0].buffer];
}

void ExpectSameFloats(const std::vector<float>& got, const std::vector<float>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-6) << i;
}

TEST(FuseSoftmaxBiasTest, TheSoftmaxAddsTheBiasItself) {
  for (bool bias_first : {false, true}) {
    const ModelPlan before = ScoresPlusBias(bias_first);
    ModelPlan after = before;
    ASSERT_EQ(FuseSoftmaxBias(&after), 1);
    ASSERT_EQ(after.steps.size(), 1u);
    EXPECT_EQ(after.steps[0].op, StepOp::kSoftmax);
    EXPECT_EQ(after.steps[0].inputs, (std::vector<int>{0, 1}));
    EXPECT_EQ(after.steps[0].b_strides, (std::vector<int64_t>{0, 4, 1}));
    const std::vector<float> expected = RunPlan(before);
    float row = 0;
    for (int k = 0; k < 4; ++k) row += expected[k];
    EXPECT_NEAR(row, 1.0f, 1e-6);
    ExpectSameFloats(RunPlan(after), expected);
  }
}

TEST(FuseSoftmaxBiasTest, ThroughAReshapesView) {
  ModelPlan before = ScoresPlusBias();
  PlanBuffer view = PlainBuffer("sum_2d", {6, 4});
  view.alias_of = 2;
  before.buffers.push_back(view);
  before.steps[1].inputs = {4};
  ModelPlan after = before;
  ASSERT_EQ(FuseSoftmaxBias(&after), 1);
  ExpectSameFloats(RunPlan(after), RunPlan(before));
}

TEST(FuseSoftmaxBiasTest, KeepsBothWhereTheSumIsNeededOrTheAxisIsNotTheLast) {
  {  // the sum is read by another step too
    ModelPlan plan = ScoresPlusBias();
    plan.buffers.push_back(PlainBuffer("copy", {2, 3, 4}));
    plan.steps.push_back(StridedCopyOf(2, 4, {2, 3, 4}, {12, 4, 1}));
    EXPECT_EQ(FuseSoftmaxBias(&plan), 0);
  }
  {  // the sum is a model output
    ModelPlan plan = ScoresPlusBias();
    plan.outputs.push_back({"sum", 2, {2, 3, 4}});
    EXPECT_EQ(FuseSoftmaxBias(&plan), 0);
  }
  {  // a softmax over the middle axis
    ModelPlan plan = ScoresPlusBias();
    plan.steps[1].in_shape = {2, 3, 4};
    EXPECT_EQ(FuseSoftmaxBias(&plan), 0);
  }
  {  // the bias is overwritten between the Add and the Softmax
    ModelPlan plan = ScoresPlusBias();
    plan.steps.insert(plan.steps.begin() + 1, StridedCopyOf(0, 1, {3, 4}, {4, 1}));
    EXPECT_EQ(FuseSoftmaxBias(&plan), 0);
  }
  {  // a product, not a sum
    ModelPlan plan = ScoresPlusBias();
    plan.steps[0].binary = BinaryFunc::kMul;
    EXPECT_EQ(FuseSoftmaxBias(&plan), 0);
  }
}

}  // namespace
}  // namespace tunefleet
