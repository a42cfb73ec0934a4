// Test scaffolding for the plan passes' tests: a plan step from its op,
// inputs and one output, the rest defaulted.
//
//   plan.steps.push_back(StepOf(StepOp::kKernel, {0}, 1));
#ifndef TUNEFLEET_COMPILER_PASSES_PLAN_STEPS_TESTING_H_
#define TUNEFLEET_COMPILER_PASSES_PLAN_STEPS_TESTING_H_

#include <utility>
#include <vector>

#include "compiler/runtime/plan.h"

namespace tunefleet {

inline PlanStep StepOf(StepOp op, std::vector<int> inputs, int output) {
  PlanStep step;
  step.op = op;
  step.inputs = std::move(inputs);
  step.outputs = {output};
  return step;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_PLAN_STEPS_TESTING_H_
