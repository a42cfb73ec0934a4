// DenseNet's chain of growing concats becomes views of its last one's
// buffer and no concat step is left; the arena then keeps every buffer alive
// beside the root out of it. Concats with an input that must stay put (a
// model input), an unaligned place, or more than one outer row stay copies.
#include "compiler/passes/alias_concats.h"

#include "compiler/passes/plan_steps_testing.h"
#include "compiler/runtime/model_runtime.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

// A concat of `inputs`, each `blocks[i]` blocks of `inner` floats, one outer row.
PlanStep Concat(std::vector<int> inputs, int output, const std::vector<int64_t>& blocks,
                int64_t inner = 16, int64_t outer = 1) {
  PlanStep step = StepOf(StepOp::kConcat, std::move(inputs), output);
  step.in_shape = {outer, inner};
  step.in_shape.insert(step.in_shape.end(), blocks.begin(), blocks.end());
  return step;
}

TEST(AliasConcatsTest, GrowingConcatsBecomeViewsOfTheLast) {
  ModelPlan plan;
  plan.buffers = {{"input", 32, -1}, {"x0", 32, -1}, {"y1", 32, -1}, {"t1", 32, -1},
                  {"x1", 16, -1},    {"y2", 48, -1}, {"t2", 48, -1}, {"x2", 16, -1},
                  {"y3", 64, -1},    {"out", 64, -1}};
  plan.inputs = {{"input", 0, {32}}};
  plan.outputs = {{"out", 9, {64}}};
  plan.steps = {StepOf(StepOp::kKernel, {0}, 1),    Concat({1}, 2, {2}),
                StepOf(StepOp::kPointwise, {2}, 3), StepOf(StepOp::kKernel, {3}, 4),
                Concat({1, 4}, 5, {2, 1}),          StepOf(StepOp::kPointwise, {5}, 6),
                StepOf(StepOp::kKernel, {6}, 7),    Concat({1, 4, 7}, 8, {2, 1, 1}),
                StepOf(StepOp::kPointwise, {8}, 9)};
  plan.steps[3].staged = {3, 4};  // a kernel that runs in the plan's layouts writes x1 so
  EXPECT_EQ(AliasConcatInputs(&plan), 3);
  ASSERT_EQ(plan.steps.size(), 6u);
  for (const PlanStep& step : plan.steps) EXPECT_NE(step.op, StepOp::kConcat);
  const std::vector<std::pair<int, int64_t>> expected = {
      {1, 0}, {2, 0}, {4, 32}, {5, 0}, {7, 48}};  // buffer, offset in y3
  for (const auto& [id, offset] : expected) {
    EXPECT_EQ(plan.buffers[id].alias_of, 8) << plan.buffers[id].tensor;
    EXPECT_EQ(plan.buffers[id].alias_offset, offset) << plan.buffers[id].tensor;
  }
  for (int id : {0, 3, 6, 8, 9}) EXPECT_EQ(plan.buffers[id].alias_of, -1);

  int64_t floats = 0;
  const std::vector<int64_t> offsets = PlanArena(plan, &floats);
  for (const auto& [id, offset] : expected) EXPECT_EQ(offsets[id], offsets[8] + offset);
  // y3 is alive from x0's write (step 0) to the last step, so nothing else
  // that is alive then may overlap it.
  for (int id : {0, 3, 6, 9}) {
    const bool apart = offsets[id] >= offsets[8] + 64 || offsets[id] + 32 <= offsets[8];
    EXPECT_TRUE(apart) << plan.buffers[id].tensor;
  }
  EXPECT_TRUE(ModelPlan::FromJson(plan.ToJson().dump()).ok());
}

TEST(AliasConcatsTest, ConcatsThatCannotBeInPlaceStayCopies) {
  ModelPlan plan;
  plan.buffers = {{"input", 16, -1}, {"a", 16, -1}, {"ya", 32, -1},  // a model input joined
                  {"b", 8, -1},      {"c", 16, -1}, {"yb", 24, -1},  // c at float 8: unaligned
                  {"d", 32, -1},     {"e", 32, -1}, {"yc", 64, -1},  // two outer rows
                  {"f", 16, -1},     {"yd", 32, -1}};                // f twice
  plan.inputs = {{"input", 0, {16}}};
  plan.steps = {StepOf(StepOp::kKernel, {0}, 1), Concat({0, 1}, 2, {1, 1}),
                StepOf(StepOp::kKernel, {0}, 3), StepOf(StepOp::kKernel, {0}, 4),
                Concat({3, 4}, 5, {1, 2}, 8),    StepOf(StepOp::kKernel, {0}, 6),
                StepOf(StepOp::kKernel, {0}, 7), Concat({6, 7}, 8, {1, 1}, 16, 2),
                StepOf(StepOp::kKernel, {0}, 9), Concat({9, 9}, 10, {1, 1})};
  for (int id : {2, 5, 8, 10}) plan.outputs.push_back({plan.buffers[id].tensor, id, {1}});
  EXPECT_EQ(AliasConcatInputs(&plan), 0);
  EXPECT_EQ(plan.steps.size(), 10u);
  for (const PlanBuffer& b : plan.buffers) EXPECT_EQ(b.alias_of, -1) << b.tensor;
}

TEST(AliasConcatsTest, APlanWithAnAliasOutsideItsRootIsRefused) {
  ModelPlan plan;
  plan.buffers = {{"root", 32, -1}, {"inside", 16, -1}};
  plan.buffers[1].alias_of = 0;
  plan.buffers[1].alias_offset = 24;
  EXPECT_FALSE(ModelPlan::FromJson(plan.ToJson().dump()).ok());
  plan.buffers[1].alias_offset = 16;
  EXPECT_TRUE(ModelPlan::FromJson(plan.ToJson().dump()).ok());
}

}  // namespace
}  // namespace tunefleet
