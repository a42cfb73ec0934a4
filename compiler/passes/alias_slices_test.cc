// ShuffleNet's channel split: the second half of a blocked tensor becomes a
// view of it, and the arena keeps the tensor alive while the view is read.
// Slices that are not whole blocks, or not in their input's layout, or at
// an unaligned place, stay gathers.
#include "compiler/passes/alias_slices.h"

#include <numeric>
#include <utility>
#include <vector>

#include "compiler/passes/plan_steps_testing.h"
#include "compiler/runtime/model_runtime.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// A [1, channels, 4, 4] activation in blocks of `block` channels.
PlanBuffer Blocked(const char* name, int64_t channels, int64_t block) {
  PlanBuffer b;
  b.tensor = name;
  b.elements = channels * 16;
  b.shape = {1, channels, 4, 4};
  b.block = block;
  return b;
}

PlanStep Slice(int in, int out, int64_t first, int64_t count) {
  PlanStep step = StepOf(StepOp::kChannelGather, {in}, out);
  step.indices.resize(count);
  std::iota(step.indices.begin(), step.indices.end(), first);
  return step;
}

TEST(AliasSlicesTest, AWholeBlockSliceBecomesAViewOfItsInput) {
  ModelPlan plan;
  plan.buffers = {Blocked("input", 16, 8), Blocked("x", 16, 8), Blocked("left", 8, 8),
                  Blocked("right", 8, 8),  Blocked("y", 8, 8),  Blocked("out", 16, 8)};
  plan.inputs = {{"input", 0, {1, 16, 4, 4}}};
  plan.outputs = {{"out", 5, {1, 16, 4, 4}}};
  plan.steps = {StepOf(StepOp::kKernel, {0}, 1), Slice(1, 2, 0, 8), Slice(1, 3, 8, 8),
                StepOf(StepOp::kKernel, {3}, 4), StepOf(StepOp::kConcat, {2, 4}, 5)};
  EXPECT_EQ(AliasChannelSlices(&plan), 2);
  ASSERT_EQ(plan.steps.size(), 3u);
  for (const PlanStep& step : plan.steps) EXPECT_NE(step.op, StepOp::kChannelGather);
  EXPECT_EQ(plan.buffers[2].alias_of, 1);
  EXPECT_EQ(plan.buffers[2].alias_offset, 0);
  EXPECT_EQ(plan.buffers[3].alias_of, 1);
  EXPECT_EQ(plan.buffers[3].alias_offset, 128);  // one block of 8 lanes x 16 pixels

  // x is alive until the concat reads its left half (step 2 now), so y,
  // written before, must not overlap it.
  int64_t floats = 0;
  const std::vector<int64_t> offsets = PlanArena(plan, &floats);
  EXPECT_EQ(offsets[3], offsets[1] + 128);
  const bool apart = offsets[4] >= offsets[1] + 256 || offsets[4] + 128 <= offsets[1];
  EXPECT_TRUE(apart);
  EXPECT_TRUE(ModelPlan::FromJson(plan.ToJson().dump()).ok());
}

TEST(AliasSlicesTest, ShufflesOtherLayoutsAndUnalignedPlacesStayGathers) {
  ModelPlan plan;
  plan.buffers = {Blocked("input", 16, 8),   Blocked("x", 16, 8),    Blocked("other", 8, 4),
                  Blocked("shuffled", 8, 8), Blocked("nchw", 16, 1), Blocked("one", 1, 1),
                  Blocked("out", 1, 1)};
  // A 2x2 image in NCHW: channel 1 starts at float 4, not 64-byte aligned.
  plan.buffers[4].shape = {1, 16, 2, 2};
  plan.buffers[4].elements = 64;
  plan.buffers[5].shape = {1, 1, 2, 2};
  plan.buffers[5].elements = 4;
  plan.inputs = {{"input", 0, {1, 16, 4, 4}}};
  plan.outputs = {{"out", 6, {1, 1, 2, 2}}};
  PlanStep shuffle = Slice(1, 3, 0, 8);
  shuffle.indices = {0, 2, 4, 6, 8, 10, 12, 14};
  plan.steps = {StepOf(StepOp::kKernel, {0}, 1),
                Slice(1, 2, 8, 8),  // whole blocks of 4, but x's blocks are 8 channels
                shuffle,
                StepOf(StepOp::kKernel, {0}, 4),
                Slice(4, 5, 1, 1),
                StepOf(StepOp::kKernel, {5}, 6)};
  EXPECT_EQ(AliasChannelSlices(&plan), 0);
  for (const PlanBuffer& b : plan.buffers) EXPECT_EQ(b.alias_of, -1) << b.tensor;
  EXPECT_EQ(plan.steps.size(), 6u);
}

TEST(AliasSlicesTest, ASliceOfAViewLiesInTheViewsRoot) {
  ModelPlan plan;
  plan.buffers = {Blocked("input", 16, 8), Blocked("root", 32, 8), Blocked("x", 16, 8),
                  Blocked("right", 8, 8), Blocked("out", 8, 8)};
  plan.buffers[2].alias_of = 1;  // x written in place in the second half of root
  plan.buffers[2].alias_offset = 256;
  plan.inputs = {{"input", 0, {1, 16, 4, 4}}};
  plan.outputs = {{"out", 4, {1, 8, 4, 4}}};
  plan.steps = {StepOf(StepOp::kKernel, {0}, 2), StepOf(StepOp::kKernel, {0}, 1), Slice(2, 3, 8, 8),
                StepOf(StepOp::kKernel, {3}, 4)};
  EXPECT_EQ(AliasChannelSlices(&plan), 1);
  EXPECT_EQ(plan.buffers[3].alias_of, 1);
  EXPECT_EQ(plan.buffers[3].alias_offset, 256 + 128);
}

// Attention's q, k and v taken from one [3, 4, 8] tensor by index (one run
// of 32 floats each) become views of it; a transpose of one of them, and a
// run at a place that is not 64-byte aligned, stay copies.
TEST(AliasSlicesTest, ACopyOfOneRunOfItsInputBecomesAView) {
  ModelPlan plan;
  plan.buffers = {PlainBuffer("input", {3, 4, 8}), PlainBuffer("qkv", {3, 4, 8}),
                  PlainBuffer("q", {4, 8}),        PlainBuffer("k", {4, 8}),
                  PlainBuffer("v", {4, 8}),        PlainBuffer("kt", {8, 4}),
                  PlainBuffer("odd", {2, 3}),      PlainBuffer("out", {4, 8})};
  plan.inputs = {{"input", 0, {3, 4, 8}}};
  plan.outputs = {{"out", 7, {4, 8}}};
  plan.steps = {StepOf(StepOp::kKernel, {0}, 1),
                StridedCopyOf(1, 2, {4, 8}, {8, 1}, 0),
                StridedCopyOf(1, 3, {4, 8}, {8, 1}, 32),
                StridedCopyOf(1, 4, {1, 4, 8}, {96, 8, 1}, 64),  // a leading axis of 1: any stride
                StridedCopyOf(3, 5, {8, 4}, {1, 8}, 0),          // k transposed
                StridedCopyOf(1, 6, {2, 3}, {8, 1}, 3),          // one run, but at float 3
                StepOf(StepOp::kKernel, {2, 4, 5, 6}, 7)};
  plan.buffers[4].shape = {1, 4, 8};
  EXPECT_EQ(AliasChannelSlices(&plan), 3);
  for (int id : {2, 3, 4}) EXPECT_EQ(plan.buffers[id].alias_of, 1) << plan.buffers[id].tensor;
  EXPECT_EQ(plan.buffers[2].alias_offset, 0);
  EXPECT_EQ(plan.buffers[3].alias_offset, 32);
  EXPECT_EQ(plan.buffers[4].alias_offset, 64);
  EXPECT_EQ(plan.buffers[5].alias_of, -1);
  EXPECT_EQ(plan.buffers[6].alias_of, -1);
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.steps[1].op, StepOp::kStridedCopy);
  EXPECT_EQ(plan.steps[2].op, StepOp::kStridedCopy);
  EXPECT_TRUE(ModelPlan::FromJson(plan.ToJson().dump()).ok());
}

}  // namespace
}  // namespace tunefleet
