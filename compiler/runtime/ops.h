// The operators a compiled model runs outside its tuned kernels, written
// once, simply, in NCHW fp32: the kernels' epilogue (bias, residual add,
// Relu/Clip), pooling, elementwise Add/Relu/Clip and softmax. Loops over
// channels run on the model's thread pool through TfRuntime::parallel_for.
#ifndef TUNEFLEET_COMPILER_RUNTIME_OPS_H_
#define TUNEFLEET_COMPILER_RUNTIME_OPS_H_

#include <cstdint>

#include "common/kernel_abi.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {

// y[o, c, i] = act(y[o, c, i] + bias[c] + residual[o, c, i]) over
// `elements` values; bias and residual may be null.
void ApplyEpilogue(const PlanEpilogue& epilogue, const float* bias, const float* residual, float* y,
                   int64_t elements, const TfRuntime* rt);

// step.op "max_pool" / "avg_pool" / "global_avg_pool" on in (step.in_shape)
// into out (step.out_shape).
void Pool(const PlanStep& step, const float* in, float* out, const TfRuntime* rt);

// step.op "add" / "relu" / "clip" / "copy" over `elements` values; `b` only for add.
void Elementwise(const PlanStep& step, const float* a, const float* b, float* out,
                 int64_t elements);

// Softmax over the middle axis of [outer, axis, inner] (step.in_shape).
void Softmax(const PlanStep& step, const float* in, float* out);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_OPS_H_
