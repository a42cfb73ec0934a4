// exp and the activations built on it (sigmoid, SiLU, tanh, GELU in its
// erf and tanh forms; softmax's exponentials) over a run of floats, in
// explicit AVX-512 or AVX2 code (internal to compiler/runtime): exp as
// VecExp (vector_math.h) computes it; a quotient (sigmoid's, SiLU's,
// tanh-GELU's) by the divide, and erf's and tanh's reciprocals as an
// estimate refined by one Newton step (relative error about 1e-7). They are
// what EfficientNet's SiLU and the transformers' GELU epilogues spend their
// time on: the portable loops GCC vectorises run at about 0.4 ns per float
// on Zen 4, against 0.2-0.3 here. A kernel's whole epilogue (bias, residual
// and any of these or the cheap activations) runs here too, in one pass
// (FusedEpilogue).
//
//   if (!ExpActivationRun(PointwiseFunc::kSilu, in, out, n)) { ...portable loop... }
#ifndef TUNEFLEET_COMPILER_RUNTIME_EXP_ACTIVATIONS_H_
#define TUNEFLEET_COMPILER_RUNTIME_EXP_ACTIVATIONS_H_

#include <cstdint>

#include "common/exp_polynomials.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {
namespace runtime_ops {

// The polynomials both exp and erf use here and in vector_math.h's VecExp
// and VecErf (the portable versions), and the code generator's exp
// (common/exp_polynomials.h).
using ::tunefleet::kErfP;
using ::tunefleet::kErfPoly;
using ::tunefleet::kExpHigh;
using ::tunefleet::kExpLow;
using ::tunefleet::kExpPoly;
using ::tunefleet::kExpPolyTerms;
using ::tunefleet::kLn2Hi;
using ::tunefleet::kLn2Lo;
using ::tunefleet::kLog2e;

// Whether `func` is one of the functions ExpActivationRun computes.
constexpr bool IsExpActivation(PointwiseFunc func) {
  return func == PointwiseFunc::kExp || func == PointwiseFunc::kSigmoid ||
         func == PointwiseFunc::kSilu || func == PointwiseFunc::kTanh ||
         func == PointwiseFunc::kGelu || func == PointwiseFunc::kGeluTanh;
}

// out[i] = func(in[i]) for i < n (`in` may be `out`); false, touching
// nothing, when `func` is not an exp activation or this CPU has neither
// AVX-512F nor AVX2 with FMA.
bool ExpActivationRun(PointwiseFunc func, const float* in, float* out, int64_t n);

// The instruction sets it has code for; ExpActivationRun takes the widest
// this CPU has. Exposed so tests run each where the CPU can.
enum class VectorIsa { kAvx2, kAvx512 };
bool CpuHas(VectorIsa isa);
// As ExpActivationRun, with `isa`'s code (false where the CPU lacks it).
bool ExpActivationRunOn(VectorIsa isa, PointwiseFunc func, const float* in, float* out, int64_t n);

// out = softmax(in) over each of `rows` rows of n contiguous floats (`in`
// may be `out`), in the widest code this CPU has; false, touching nothing,
// where it has neither. SoftmaxRowsRunOn: with `isa`'s code.
bool SoftmaxRowsRun(const float* in, float* out, int64_t rows, int64_t n);
bool SoftmaxRowsRunOn(VectorIsa isa, const float* in, float* out, int64_t rows, int64_t n);

// A kernel's epilogue in one pass: out[i] = func(in[i] + bias + residual[i])
// for i < n (`in` may be `out`), func with its parameters alpha and beta
// (plan.h Activation). The bias is none, bias[i] (kPerPosition: a dense
// layer's row), or bias[i % period] (kPeriodic: a channel-blocked row that
// starts at a block's first lane, period = the block; 1 for an NCHW row,
// one value). What a kernel's epilogue hook runs on each region it
// finishes, still in cache (ops.h BoundEpilogue).
enum class EpilogueBias { kNone, kPerPosition, kPeriodic };
using FusedEpilogueFn = void (*)(const float* in, float* out, const float* bias, int64_t period,
                                 const float* residual, int64_t n, float alpha, float beta);
// The code for one combination in the widest instruction set this CPU has;
// null where it has neither, `func` is not one of none, relu, clip, hard
// sigmoid, hard swish and the exp activations, or a periodic bias's period
// is neither a multiple nor a divisor of the set's vector lanes (8, 16).
// FusedEpilogueOn: with `isa`'s code.
FusedEpilogueFn FusedEpilogue(PointwiseFunc func, EpilogueBias bias, bool residual, int64_t period);
FusedEpilogueFn FusedEpilogueOn(VectorIsa isa, PointwiseFunc func, EpilogueBias bias, bool residual,
                                int64_t period);

}  // namespace runtime_ops
}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_EXP_ACTIVATIONS_H_
