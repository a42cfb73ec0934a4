// Test scaffolding for the plan passes' tests: a plan step from its op,
// inputs and one output, the rest defaulted; a plain buffer of a shape;
// a runtime that runs an operator's tasks one after another.
//
//   plan.steps.push_back(StepOf(StepOp::kKernel, {0}, 1));
//   plan.buffers.push_back(PlainBuffer("x", {2, 3}));
//   plan.steps.push_back(StridedCopyOf(0, 1, {3, 2}, {1, 3}));  // a transpose
//   RunTensorOp(step, inputs, out, elements, &kSerialRuntime);
#ifndef TUNEFLEET_COMPILER_PASSES_PLAN_STEPS_TESTING_H_
#define TUNEFLEET_COMPILER_PASSES_PLAN_STEPS_TESTING_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "common/kernel_abi.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {

inline PlanBuffer PlainBuffer(const char* name, std::vector<int64_t> shape) {
  PlanBuffer b;
  b.tensor = name;
  b.shape = std::move(shape);
  b.elements = 1;
  for (int64_t d : b.shape) b.elements *= d;
  return b;
}

inline void SerialParallelFor(void*, int64_t n, TfParallelBody body, void* closure) {
  for (int64_t i = 0; i < n; ++i) body(i, closure);
}
inline constexpr TfRuntime kSerialRuntime = {TF_KERNEL_ABI_VERSION, 1,       nullptr,
                                             &SerialParallelFor,    nullptr, nullptr};

inline PlanStep StepOf(StepOp op, std::vector<int> inputs, int output) {
  PlanStep step;
  step.op = op;
  step.inputs = std::move(inputs);
  step.outputs = {output};
  return step;
}

// out = in[offset + sum_d i_d * strides[d]] over out_shape.
inline PlanStep StridedCopyOf(int in, int out, std::vector<int64_t> out_shape,
                              std::vector<int64_t> strides, int64_t offset = 0) {
  PlanStep step = StepOf(StepOp::kStridedCopy, {in}, out);
  step.out_shape = std::move(out_shape);
  step.a_strides = std::move(strides);
  step.a_offset = offset;
  return step;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_PASSES_PLAN_STEPS_TESTING_H_
