// What the runtime's operators share (internal to compiler/runtime): how
// they split work over the model's thread pool (a strided step's rows
// too), the multiversioning that builds their hot loops for AVX2 and
// AVX-512 too, the 8-lane vector their
// reductions and pooling are written in, exp/erf that GCC vectorises, and
// the one definition of each BinaryFunc.
#ifndef TUNEFLEET_COMPILER_RUNTIME_VECTOR_MATH_H_
#define TUNEFLEET_COMPILER_RUNTIME_VECTOR_MATH_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/kernel_abi.h"
#include "compiler/runtime/exp_activations.h"
#include "compiler/runtime/plan.h"

namespace tunefleet {
namespace runtime_ops {

// Below this many floats touched, an operator runs on the calling thread:
// waking the pool's workers costs more than the work (a squeeze-excite
// block's [1, C, 1, 1] tensors).
constexpr int64_t kSerialWork = 16384;

// Runs fn(i) for i in [0, n) on the runtime's pool, or serially when the
// `work` (floats touched, about) is too little to share.
template <typename Fn>
void ParallelFor(const TfRuntime* rt, int64_t n, int64_t work, Fn fn) {
  if (work < kSerialWork || n <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  auto body = [](int64_t i, void* closure) { (*static_cast<Fn*>(closure))(i); };
  rt->parallel_for(rt->context, n, body, &fn);
}

// Calls fn(out_row, a_row_offset, b_row_offset) for each row (every index
// but the last) of step.out_shape, rows split over the runtime's pool. A
// task divides its first row's index into coordinates once, then steps
// them row by row: a division per dimension per row cost more than
// copying a row of a few dozen floats (Swin's window transposes).
template <typename Fn>
void ForEachRow(const PlanStep& step, const TfRuntime* rt, Fn fn) {
  const std::vector<int64_t>& shape = step.out_shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= shape[d];
  const int64_t width = rank > 0 ? shape[rank - 1] : 1;
  const bool has_a = !step.a_strides.empty(), has_b = !step.b_strides.empty();
  // Enough rows per task that scheduling costs little against the copy.
  const int64_t rows_per_task = std::max<int64_t>(1, 4096 / std::max<int64_t>(width, 1));
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  ParallelFor(rt, tasks, rows * width, [&](int64_t task) {
    const int64_t first = task * rows_per_task, end = std::min(rows, first + rows_per_task);
    std::vector<int64_t> index(std::max<int64_t>(rank - 1, 0));
    int64_t a = step.a_offset, b = 0, rest = first;
    for (int64_t d = rank - 2; d >= 0; --d) {
      index[d] = rest % shape[d];
      rest /= shape[d];
      if (has_a) a += index[d] * step.a_strides[d];
      if (has_b) b += index[d] * step.b_strides[d];
    }
    for (int64_t row = first; row < end; ++row) {
      fn(row * width, a, b);
      for (int64_t d = rank - 2; d >= 0; --d) {  // the next row's coordinates
        if (has_a) a += step.a_strides[d];
        if (has_b) b += step.b_strides[d];
        if (++index[d] < shape[d]) break;
        if (has_a) a -= shape[d] * step.a_strides[d];
        if (has_b) b -= shape[d] * step.b_strides[d];
        index[d] = 0;
      }
    }
  });
}

// A strided operand's stride along the last axis (1 when it has none).
inline int64_t LastStride(const std::vector<int64_t>& strides) {
  return strides.empty() ? 1 : strides.back();
}

// The runtime runs on any x86-64, so it is built for the baseline; its
// hot loops are also built for AVX2 and AVX-512, picked when the library
// loads (GCC's function multiversioning), and vectorised (-O3 in BUILD).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TF_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TF_VECTOR_CLONES
#endif

// GCC's vector of 8 floats, the unit of the hot loops whose lanes GCC
// would not vectorise on its own (a float max, which std::max makes a
// compare and select per lane; a sum, which without fast-math stays one
// scalar chain): one AVX2 register, two per AVX-512 block of 16. (One
// vector of 16 floats is AVX-512's register; GCC lowers it lane by lane in
// the AVX2 and baseline clones, which made max pooling in NCHW16c 13x
// slower than in NCHW8c on an AVX2 host.)
typedef float Float8Lanes __attribute__((vector_size(8 * sizeof(float))));
// The same vector read from any float address (as immintrin.h's __m256_u);
// a macro, since a function returning the vector would change the ABI of
// the baseline clone (-Wpsabi).
typedef float Float8Unaligned
    __attribute__((vector_size(8 * sizeof(float)), aligned(4), may_alias));
#define TF_LOAD8(p) (*reinterpret_cast<const Float8Unaligned*>(p))

// exp(x) in fp32 that GCC vectorises (no libm call): 2^n * e^r with
// |r| <= ln2/2, the polynomial kExpPoly (exp_activations.h,
// whose explicit vector code uses the same); relative error about 1e-7 over
// [-87, 88] (inputs outside are clamped there).
inline float VecExp(float x) {
  x = std::min(std::max(x, -87.3f), 88.7f);
  // Rounded to the nearest integer by the 1.5 * 2^23 trick: std::floor
  // would be a libm call (GCC expands it inline only without trapping
  // math), which keeps the loops around from vectorising.
  const float n = (x * kLog2e + 12582912.0f) - 12582912.0f;
  const float r = x - n * kLn2Hi - n * kLn2Lo;
  float p = kExpPoly[0];
  for (int k = 1; k < kExpPolyTerms; ++k) p = p * r + kExpPoly[k];
  const float e = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return e * scale;
}

// erf(x), Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
inline float VecErf(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + kErfP * a);
  float p = kErfPoly[0];
  for (int k = 1; k < 5; ++k) p = p * t + kErfPoly[k];
  const float y = 1.0f - p * t * VecExp(-a * a);
  return std::copysign(y, x);
}

// f(x, y) of plan.h's BinaryFunc; kFunc is fixed per instantiation so the
// loops that call it are branch-free.
template <BinaryFunc kFunc>
inline float Binary(float x, float y) {
  if constexpr (kFunc == BinaryFunc::kAdd) return x + y;
  if constexpr (kFunc == BinaryFunc::kSub) return x - y;
  if constexpr (kFunc == BinaryFunc::kMul) return x * y;
  if constexpr (kFunc == BinaryFunc::kDiv) return x / y;
  // pow: squares (the layer norms') exactly and fast.
  if constexpr (kFunc == BinaryFunc::kPow) return y == 2.0f ? x * x : std::pow(x, y);
  if constexpr (kFunc == BinaryFunc::kPrelu) return x < 0 ? x * y : x;
  if constexpr (kFunc == BinaryFunc::kMax) return std::max(x, y);
  if constexpr (kFunc == BinaryFunc::kMin) return std::min(x, y);
  if constexpr (kFunc == BinaryFunc::kMod) return std::fmod(x, y);
  if constexpr (kFunc == BinaryFunc::kFloorMod) {
    const float r = std::fmod(x, y);
    return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
  }
  if constexpr (kFunc == BinaryFunc::kSelect) return y != y ? x : y;  // NaN: keep x
  return x;
}

// Pick<f>::fn for a run-time `func`: the instantiation of a row function
// for it (Pick is a template of one BinaryFunc with a static member fn).
template <template <BinaryFunc> class Pick>
auto ForBinary(BinaryFunc func) {
  switch (func) {
    case BinaryFunc::kAdd:
      return Pick<BinaryFunc::kAdd>::fn;
    case BinaryFunc::kSub:
      return Pick<BinaryFunc::kSub>::fn;
    case BinaryFunc::kMul:
      return Pick<BinaryFunc::kMul>::fn;
    case BinaryFunc::kDiv:
      return Pick<BinaryFunc::kDiv>::fn;
    case BinaryFunc::kPow:
      return Pick<BinaryFunc::kPow>::fn;
    case BinaryFunc::kPrelu:
      return Pick<BinaryFunc::kPrelu>::fn;
    case BinaryFunc::kMax:
      return Pick<BinaryFunc::kMax>::fn;
    case BinaryFunc::kMin:
      return Pick<BinaryFunc::kMin>::fn;
    case BinaryFunc::kMod:
      return Pick<BinaryFunc::kMod>::fn;
    case BinaryFunc::kFloorMod:
      return Pick<BinaryFunc::kFloorMod>::fn;
    case BinaryFunc::kSelect:
      return Pick<BinaryFunc::kSelect>::fn;
  }
  return Pick<BinaryFunc::kAdd>::fn;
}

}  // namespace runtime_ops
}  // namespace tunefleet

#endif  // TUNEFLEET_COMPILER_RUNTIME_VECTOR_MATH_H_
