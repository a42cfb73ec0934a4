// The operators a compiled model runs outside its tuned kernels, in fp32,
// vectorised (for AVX2 and AVX-512 as well as the baseline) and split over
// the model's thread pool: the kernels' epilogue (bias, residual add, any
// pointwise activation), layout changes between NCHW and NCHW[b]c
// (plan.h), pooling in either layout, elementwise Add and pointwise
// functions in any layout, softmax, and the tensor
// operators transformer layers need (transpose/slice as strided copies,
// broadcasting binary operators, unary math, mean over an axis). Loops over channel
// blocks and rows run on the model's thread pool through
// TfRuntime::parallel_for.
#ifndef TUNEFLEET_COMPILER_RUNTIME_OPS_H_
#define TUNEFLEET_COMPILER_RUNTIME_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/kernel_abi.h"
#include "compiler/runtime/exp_activations.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {

// x / d for 0 <= x < 2^52 and d >= 1 without a 64-bit division (40 cycles
// on some cores, where a kernel's epilogue hook divides on every call): a
// multiply by 1 / d in double, which is off by at most one, corrected.
struct FastDivisor {
  int64_t d = 1;
  double inverse = 1.0;

  FastDivisor() = default;
  explicit FastDivisor(int64_t divisor) : d(divisor), inverse(1.0 / static_cast<double>(divisor)) {}
  int64_t Quotient(int64_t x) const {
    int64_t q = static_cast<int64_t>(static_cast<double>(x) * inverse);
    if (q * d > x) {
      --q;
    } else if ((q + 1) * d <= x) {
      ++q;
    }
    return q;
  }
  int64_t Remainder(int64_t x) const { return x - Quotient(x) * d; }
};

// A kernel step's epilogue, y = act(y + bias[c] + residual), over its
// output of `elements` values laid out as [rows, epilogue.inner,
// epilogue.block] (channel c = (row % (channels / block)) * block + lane),
// bound to its buffers (bias and residual may be null). A kernel compiled
// with an epilogue hook calls it, as the TfEpilogue it begins with, on each
// region of y it finishes (common/kernel_abi.h); ApplyEpilogue runs it over
// the whole of y after a kernel without one.
struct BoundEpilogue {
  using RowFn = void (*)(float*, const float*, const float*, int64_t, int64_t, float, float);
  using InPlaceFn = void (*)(float*, int64_t, float, float);

  TfEpilogue hook;  // first: a kernel's TfEpilogue* is this object's address
  PlanEpilogue epilogue;
  const float* bias = nullptr;
  const float* residual = nullptr;
  float* y = nullptr;
  int64_t elements = 0;
  // y as runs sharing one bias base: a dense output's rows of `channels`,
  // else (outer, channel block) runs of inner * block floats.
  bool dense = false;
  int64_t run = 1, blocks = 1;
  FastDivisor by_run, by_blocks, by_block;
  RowFn row = nullptr;        // the adds and a relu or clip
  InPlaceFn after = nullptr;  // any other activation, after them
  // All of it in one pass of vector code, where this CPU and the
  // activation have it (exp_activations.h); row and after otherwise.
  runtime_ops::FusedEpilogueFn fused = nullptr;

  // y[offset, offset + count) in place; a range outside y does nothing.
  void Apply(int64_t offset, int64_t count) const;
};
BoundEpilogue BindEpilogue(const PlanEpilogue& epilogue, const float* bias, const float* residual,
                           float* y, int64_t elements);

// The whole epilogue, in parallel pieces that stay in L1.
void ApplyEpilogue(const PlanEpilogue& epilogue, const float* bias, const float* residual, float* y,
                   int64_t elements, const TfRuntime* rt);

// The 4-D tensor in `src` (laid out as `src_layout` says) into `dst` (laid
// out as `dst_layout`; same dims). Padding columns of dst are not written.
void Relayout(const PlanBuffer& src_layout, const float* src, const PlanBuffer& dst_layout,
              float* dst, const TfRuntime* rt);

// step.op "channel_gather": out's channel c = in's channel step.indices[c]
// (in laid out as in_layout, out as out_layout; the other dims the same).
void ChannelGather(const PlanStep& step, const PlanBuffer& in_layout, const float* in,
                   const PlanBuffer& out_layout, float* out, const TfRuntime* rt);

// step.op "max_pool" / "avg_pool" / "global_avg_pool" on in (step.in_shape,
// laid out as in_layout) into out (step.out_shape, laid out as out_layout:
// the same block for max/avg pooling; NCHW for global pooling).
void Pool(const PlanStep& step, const PlanBuffer& in_layout, const float* in,
          const PlanBuffer& out_layout, float* out, const TfRuntime* rt);

// StepOp kAdd / kPointwise / kCopy over `elements` values; `b` only for kAdd.
void Elementwise(const PlanStep& step, const float* a, const float* b, float* out, int64_t elements,
                 const TfRuntime* rt);

// StepOp kScaleWeights: out = w with each input channel c's weights times
// s[c], w packed as step.in_shape {K/ob, C/ib, R*S, ib, ob} says.
void ScaleWeights(const PlanStep& step, const float* w, const float* s, float* out,
                  const TfRuntime* rt);

// StepOp kChannelBinary: out = binary(a, b[n, c]) over the 4-D `a`, laid out
// as `layout` (out likewise); b holds step.in_shape [N or 1, C] floats.
void ChannelBinary(const PlanStep& step, const PlanBuffer& layout, const float* a, const float* b,
                   float* out, const TfRuntime* rt);

// StepOp kBatchNorm (inference): out = act(x * s[c] + t[c]) with s = scale /
// sqrt(var + step.alpha), t = B - mean * s from inputs x, scale, B, mean,
// var; over a 4-D x laid out as `layout` (out likewise), or a plain
// [N, C, inner] (step.in_shape); act: step.activation.
void BatchNorm(const PlanStep& step, const PlanBuffer& layout,
               const std::vector<const float*>& inputs, float* out, const TfRuntime* rt);

// Softmax over the middle axis of [outer, axis, inner] (step.in_shape).
// With a `bias` (passes/fuse_softmax_bias.h; inner is 1): softmax(in + bias)
// along the last axis of step.out_shape, the bias read through
// step.b_strides (0 on its broadcast axes).
void Softmax(const PlanStep& step, const float* in, const float* bias, float* out,
             const TfRuntime* rt);

// One contiguous run of n floats reduced to one value by `func`, in
// vectors (kReduce's steps with nothing after the axis; the portable
// softmax's maximum and sum).
float ReduceContiguous(ReduceFunc func, const float* in, int64_t n);

// The tensor operators of plan.h (kStridedCopy, kBroadcast, kReduce,
// kConcat, kPad, kGather, kLayerNorm) on plain buffers:
// `inputs` in step.inputs order, `out` of `out_elements` floats,
// `more_outputs` step.outputs[1...] (a layer norm's mean and 1/stddev).
// IsTensorOp: whether `op` is one of them.
bool IsTensorOp(StepOp op);
void RunTensorOp(const PlanStep& step, const std::vector<const float*>& inputs, float* out,
                 int64_t out_elements, const TfRuntime* rt,
                 const std::vector<float*>& more_outputs = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_OPS_H_
