#include "compiler/runtime/exp_activations.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <limits>
#endif

namespace tunefleet {
namespace runtime_ops {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// exp's argument is clamped to [kExpLow, kExpHigh] (exp_polynomials.h), so
// a reciprocal's Newton step never multiplies infinity by zero.
// The same formulas for each vector width: V names the value (U registers
// of Avx512 or Avx2 below) and its operations, each compiled for its ISA.
#define TF_EXP_ACTIVATIONS_BODY                                                         \
  /* e^x, or e^-x with kNegate (sigmoid's, SiLU's, erf's: no negation first),           \
     as e times 2^n in the ISA's form `s` (Scale, ScaleAdd) */                          \
  template <bool kNegate>                                                               \
  TF_INLINE static V ExpParts(V x, V* s) {                                              \
    x = kNegate ? Min(Max(x, Set(-kExpHigh)), Set(-kExpLow))                            \
                : Min(Max(x, Set(kExpLow)), Set(kExpHigh));                             \
    V n;                                                                                \
    Split<kNegate>(x, &n, s);                                                           \
    V r = kNegate ? Fnmsub(n, Set(kLn2Hi), x) : Fnmadd(n, Set(kLn2Hi), x);              \
    r = Fnmadd(n, Set(kLn2Lo), r);                                                      \
    V p = Set(kExpPoly[0]);                                                             \
    for (int k = 1; k < kExpPolyTerms; ++k) p = Fmadd(p, r, Set(kExpPoly[k]));          \
    return Fmadd(Mul(p, r), r, Add(r, Set(1.0f)));                                      \
  }                                                                                     \
  template <bool kNegate = false>                                                       \
  TF_INLINE static V Exp(V x) {                                                         \
    V s;                                                                                \
    const V e = ExpParts<kNegate>(x, &s);                                               \
    return Scale(e, s);                                                                 \
  }                                                                                     \
  /* 1 + e^x or 1 + e^-x: the add folded into the scaling where the ISA can */          \
  template <bool kNegate>                                                               \
  TF_INLINE static V OnePlusExp(V x) {                                                  \
    V s;                                                                                \
    const V e = ExpParts<kNegate>(x, &s);                                               \
    return ScaleAdd(e, s, Set(1.0f));                                                   \
  }                                                                                     \
  TF_INLINE static V Recip(V d) {                                                       \
    const V r = Rcp(d);                                                                 \
    return Mul(r, Fnmadd(d, r, Set(2.0f)));                                             \
  }                                                                                     \
  TF_INLINE static V Erf(V z) {                                                         \
    const V a = Abs(z);                                                                 \
    const V t = Recip(Fmadd(a, Set(kErfP), Set(1.0f)));                                 \
    V p = Set(kErfPoly[0]);                                                             \
    for (int k = 1; k < 5; ++k) p = Fmadd(p, t, Set(kErfPoly[k]));                      \
    const V y = Fnmadd(Mul(p, t), Exp<true>(Mul(a, a)), Set(1.0f));                     \
    return CopySign(y, z);                                                              \
  }                                                                                     \
  template <PointwiseFunc kFunc>                                                        \
  TF_INLINE static V Apply(V x) {                                                       \
    const V one = Set(1.0f), two = Set(2.0f);                                           \
    if constexpr (kFunc == PointwiseFunc::kExp) {                                       \
      return Exp(x);                                                                    \
    } else if constexpr (kFunc == PointwiseFunc::kSigmoid) {                            \
      return Over(one, OnePlusExp<true>(x));                                            \
    } else if constexpr (kFunc == PointwiseFunc::kSilu) {                               \
      return Over(x, OnePlusExp<true>(x));                                              \
    } else if constexpr (kFunc == PointwiseFunc::kTanh) {                               \
      return Fnmadd(two, Recip(OnePlusExp<false>(Mul(two, x))), one);                   \
    } else if constexpr (kFunc == PointwiseFunc::kGeluTanh) {                           \
      /* 0.5 x (1 + tanh u) = x sigmoid(2u): no cancellation as u -> -inf */            \
      const V u = Mul(Set(0.7978845608f), Fmadd(Mul(Set(0.044715f), Mul(x, x)), x, x)); \
      return Over(x, OnePlusExp<true>(Mul(two, u)));                                    \
    } else {                                                                            \
      return Mul(Mul(Set(0.5f), x), Add(one, Erf(Mul(x, Set(0.70710678f)))));           \
    }                                                                                   \
  }

// The loops over memory, the same for each ISA: Epilogue (bias, residual
// and a function over n floats in one pass, as a kernel's epilogue hook
// calls it on a region still in cache; without either, the function alone)
// and SoftmaxRow (softmax over one row of n floats with the same
// exp: the row's maximum, exp(x - max) with its sum kept in registers, the
// scale; each pass U registers at a time, then one (One: the ISA's
// one-register type), then the row's tail in one partial register: one
// rather than U partial registers measured faster on attention's rows of
// 49).
#define TF_RUN_BODIES                                                                             \
  /* The functions the fused epilogue applies, with their parameters (plan.h                      \
     Activation): each comparison ordered as the portable Pointwise's, so a                       \
     NaN comes out as it does there. */                                                           \
  template <PointwiseFunc kFunc>                                                                  \
  TF_INLINE static V Act(V x, V alpha, V beta) {                                                  \
    if constexpr (kFunc == PointwiseFunc::kNone) {                                                \
      return x;                                                                                   \
    } else if constexpr (kFunc == PointwiseFunc::kRelu) {                                         \
      return Max(x, Set(0.0f));                                                                   \
    } else if constexpr (kFunc == PointwiseFunc::kClip) {                                         \
      return Min(beta, Max(alpha, x));                                                            \
    } else if constexpr (kFunc == PointwiseFunc::kHardSigmoid) {                                  \
      return Max(Min(Fmadd(alpha, x, beta), Set(1.0f)), Set(0.0f));                               \
    } else if constexpr (kFunc == PointwiseFunc::kHardSwish) {                                    \
      return Mul(x, Max(Min(Fmadd(alpha, x, beta), Set(1.0f)), Set(0.0f)));                       \
    } else {                                                                                      \
      return Apply<kFunc>(x);                                                                     \
    }                                                                                             \
  }                                                                                               \
  /* out = Act(in + bias + residual) over n floats (`in` may be `out`), in                        \
     one pass: U registers at a time, then one, then one partial register.                        \
     kBias: 0 none; 1 per position (bias[i]); 2 periodic (bias[i % period],                       \
     period a multiple or a divisor of kLanes). */                                                \
  template <PointwiseFunc kFunc, int kBias, bool kResidual>                                       \
  static void Epilogue(const float* in, float* out, const float* bias, int64_t period,            \
                       const float* residual, int64_t n, float alpha, float beta) {               \
    using W = typename One::V;                                                                    \
    constexpr int64_t kBlock = U * kLanes;                                                        \
    /* A periodic bias as `pattern`, whose period `cycle` is whole registers */                   \
    float lanes[kLanes];                                                                          \
    const float* pattern = bias;                                                                  \
    int64_t cycle = period;                                                                       \
    if constexpr (kBias == 2) {                                                                   \
      if (period < kLanes) {                                                                      \
        for (int k = 0, j = 0; k < kLanes; ++k, j = j + 1 == period ? 0 : j + 1) {                \
          lanes[k] = bias[j];                                                                     \
        }                                                                                         \
        pattern = lanes;                                                                          \
        cycle = kLanes;                                                                           \
      }                                                                                           \
    }                                                                                             \
    int64_t i = 0;                                                                                \
    if (kBias != 2 || kBlock % cycle == 0) {                                                      \
      const V va = Set(alpha), vb = Set(beta);                                                    \
      V fixed = Set(0.0f); /* kBias 2: the pattern's registers, the same each block */            \
      if constexpr (kBias == 2) {                                                                 \
        _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) fixed.v[u] =                          \
            One::Load(pattern + (u * kLanes) % cycle).v[0];                                       \
      }                                                                                           \
      for (; i + kBlock <= n; i += kBlock) {                                                      \
        V x = Load(in + i);                                                                       \
        if constexpr (kBias == 1) x = Add(x, Load(bias + i));                                     \
        if constexpr (kBias == 2) x = Add(x, fixed);                                              \
        if constexpr (kResidual) x = Add(x, Load(residual + i));                                  \
        Store(out + i, Act<kFunc>(x, va, vb));                                                    \
      }                                                                                           \
    }                                                                                             \
    const W wa = One::Set(alpha), wb = One::Set(beta);                                            \
    /* i's place in the pattern: 0 after whole blocks of it, or none */                           \
    int64_t phase = 0;                                                                            \
    for (; i + kLanes <= n; i += kLanes) {                                                        \
      W x = One::Load(in + i);                                                                    \
      if constexpr (kBias == 1) x = One::Add(x, One::Load(bias + i));                             \
      if constexpr (kBias == 2) {                                                                 \
        x = One::Add(x, One::Load(pattern + phase));                                              \
        phase = phase + kLanes == cycle ? 0 : phase + kLanes;                                     \
      }                                                                                           \
      if constexpr (kResidual) x = One::Add(x, One::Load(residual + i));                          \
      One::Store(out + i, One::template Act<kFunc>(x, wa, wb));                                   \
    }                                                                                             \
    if (i < n) {                                                                                  \
      const int64_t rest = n - i;                                                                 \
      W x = One::LoadPartial(in + i, rest, 0.0f);                                                 \
      if constexpr (kBias == 1) x = One::Add(x, One::LoadPartial(bias + i, rest, 0.0f));          \
      if constexpr (kBias == 2) x = One::Add(x, One::Load(pattern + phase));                      \
      if constexpr (kResidual) x = One::Add(x, One::LoadPartial(residual + i, rest, 0.0f));       \
      One::StorePartial(out + i, One::template Act<kFunc>(x, wa, wb), rest);                      \
    }                                                                                             \
  }                                                                                               \
  static void SoftmaxRow(const float* in, float* out, int64_t n) {                                \
    using W = typename One::V;                                                                    \
    constexpr int64_t kBlock = U * kLanes;                                                        \
    constexpr float kLowest = -std::numeric_limits<float>::infinity();                            \
    V top = Set(kLowest);                                                                         \
    int64_t i = 0;                                                                                \
    for (; i + kBlock <= n; i += kBlock) top = Max(top, Load(in + i));                            \
    W top1 = One::Set(kLowest);                                                                   \
    for (; i + kLanes <= n; i += kLanes) top1 = One::Max(top1, One::Load(in + i));                \
    if (i < n) top1 = One::Max(top1, One::LoadPartial(in + i, n - i, kLowest));                   \
    const float max = std::max(ReduceMax(top), One::ReduceMax(top1));                             \
    const V shift = Set(max);                                                                     \
    V sum = Set(0.0f);                                                                            \
    for (i = 0; i + kBlock <= n; i += kBlock) {                                                   \
      const V e = Exp(Sub(Load(in + i), shift));                                                  \
      Store(out + i, e);                                                                          \
      sum = Add(sum, e);                                                                          \
    }                                                                                             \
    const W shift1 = One::Set(max);                                                               \
    W sum1 = One::Set(0.0f);                                                                      \
    for (; i + kLanes <= n; i += kLanes) {                                                        \
      const W e = One::Exp(One::Sub(One::Load(in + i), shift1));                                  \
      One::Store(out + i, e);                                                                     \
      sum1 = One::Add(sum1, e);                                                                   \
    }                                                                                             \
    if (i < n) {                                                                                  \
      const W e =                                                                                 \
          One::ZeroPast(One::Exp(One::Sub(One::LoadPartial(in + i, n - i, max), shift1)), n - i); \
      One::StorePartial(out + i, e, n - i);                                                       \
      sum1 = One::Add(sum1, e);                                                                   \
    }                                                                                             \
    const float scale = 1.0f / (ReduceAdd(sum) + One::ReduceAdd(sum1));                           \
    const V scales = Set(scale);                                                                  \
    for (i = 0; i + kBlock <= n; i += kBlock) Store(out + i, Mul(Load(out + i), scales));         \
    for (; i < n; ++i) out[i] *= scale;                                                           \
  }

// Each ISA's value V is U registers, and each operation issues U
// independent instructions: exp's chain of about 20 dependent operations
// is otherwise longer than an out-of-order core's floating-point scheduler
// looks ahead (Zen 1 splits every 256-bit operation in two and ran SiLU at
// about 40 cycles per vector of 8, latency-bound), so with U = 4 the core
// always has independent work to issue.
// Every operation inlines into the loop that uses it: values of U
// registers passed to a call would go through memory.
#define TF_INLINE [[gnu::always_inline]]
#define TF_EACH(expr)                                                     \
  V result;                                                               \
  _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) result.v[u] = expr; \
  return result

// The value type and the operations that are one intrinsic per register,
// the same in each ISA but for the register type R and the intrinsics'
// prefix P (__m512 and _mm512, __m256 and _mm256).
#define TF_ELEMENTWISE_OPS(R, P)                                                               \
  struct V {                                                                                   \
    R v[U];                                                                                    \
  };                                                                                           \
  TF_INLINE static V Set(float x) { TF_EACH(P##_set1_ps(x)); }                                 \
  TF_INLINE static V Add(V a, V b) { TF_EACH(P##_add_ps(a.v[u], b.v[u])); }                    \
  TF_INLINE static V Sub(V a, V b) { TF_EACH(P##_sub_ps(a.v[u], b.v[u])); }                    \
  TF_INLINE static V Mul(V a, V b) { TF_EACH(P##_mul_ps(a.v[u], b.v[u])); }                    \
  TF_INLINE static V Min(V a, V b) { TF_EACH(P##_min_ps(a.v[u], b.v[u])); }                    \
  TF_INLINE static V Max(V a, V b) { TF_EACH(P##_max_ps(a.v[u], b.v[u])); }                    \
  TF_INLINE static V Fmadd(V a, V b, V c) { TF_EACH(P##_fmadd_ps(a.v[u], b.v[u], c.v[u])); }   \
  TF_INLINE static V Fnmadd(V a, V b, V c) { TF_EACH(P##_fnmadd_ps(a.v[u], b.v[u], c.v[u])); } \
  TF_INLINE static V Fnmsub(V a, V b, V c) { TF_EACH(P##_fnmsub_ps(a.v[u], b.v[u], c.v[u])); } \
  TF_INLINE static V Load(const float* p) { TF_EACH(P##_loadu_ps(p + u * kLanes)); }           \
  TF_INLINE static void Store(float* p, V x) {                                                 \
    _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) P##_storeu_ps(p + u * kLanes, x.v[u]); \
  }

// GCC 12's avx512fintrin.h starts the masked forms its unmasked intrinsics
// expand to (and its reductions) from _mm512_undefined_ps(), which
// -Wmaybe-uninitialized and -Wuninitialized then report once they are
// inlined here: a known false positive (GCC PR105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC push_options
#pragma GCC target("avx512f")
template <int U>
struct Avx512 {
  static constexpr int kLanes = 16;
  TF_ELEMENTWISE_OPS(__m512, _mm512)
  // n = round(x log2e) (-x with kNegate); 2^n's form is n itself, for scalef.
  template <bool kNegate>
  TF_INLINE static void Split(V x, V* n, V* s) {
    const __m512 log2e = _mm512_set1_ps(kNegate ? -kLog2e : kLog2e);
    _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) {
      n->v[u] = _mm512_roundscale_ps(_mm512_mul_ps(x.v[u], log2e),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    *s = *n;
  }
  TF_INLINE static V Scale(V e, V n) { TF_EACH(_mm512_scalef_ps(e.v[u], n.v[u])); }
  TF_INLINE static V ScaleAdd(V e, V n, V c) { return Add(Scale(e, n), c); }
  TF_INLINE static V Rcp(V d) { TF_EACH(_mm512_rcp14_ps(d.v[u])); }
  // num / den as a divide, as on AVX2: the divider runs beside the FMA
  // ports that exp fills. On Zen 4, one thread (runtime_ops_bench, two
  // alternating runs), against rcp14 and a Newton step: bias+SiLU 0.24 ->
  // 0.20 ns per float on EfficientNet's blocked rows, bias+tanh-GELU 0.38
  // -> 0.31 on dense rows; exact. Not measured on an Intel AVX-512 core.
  TF_INLINE static V Over(V num, V den) { TF_EACH(_mm512_div_ps(num.v[u], den.v[u])); }
  TF_INLINE static V Abs(V x) { TF_EACH(_mm512_abs_ps(x.v[u])); }
  TF_INLINE static V CopySign(V magnitude, V sign) {
    const __m512i mask = _mm512_set1_epi32(0x80000000);
    TF_EACH(_mm512_castsi512_ps(
        _mm512_or_si512(_mm512_castps_si512(magnitude.v[u]),
                        _mm512_and_si512(_mm512_castps_si512(sign.v[u]), mask))));
  }
  // Register u's lanes below count - u kLanes (count < U kLanes); the
  // others `fill` (loads) or untouched (stores) or zero.
  TF_INLINE static __mmask16 Below(int64_t count, int u) {
    const int64_t lanes = std::clamp<int64_t>(count - u * kLanes, 0, kLanes);
    return static_cast<__mmask16>((1u << lanes) - 1);
  }
  TF_INLINE static V LoadPartial(const float* p, int64_t count, float fill) {
    TF_EACH(_mm512_mask_loadu_ps(_mm512_set1_ps(fill), Below(count, u), p + u * kLanes));
  }
  TF_INLINE static void StorePartial(float* p, V x, int64_t count) {
#pragma GCC unroll 8
    for (int u = 0; u < U; ++u) _mm512_mask_storeu_ps(p + u * kLanes, Below(count, u), x.v[u]);
  }
  TF_INLINE static V ZeroPast(V x, int64_t count) {
    TF_EACH(_mm512_maskz_mov_ps(Below(count, u), x.v[u]));
  }
  TF_INLINE static float ReduceMax(V x) {
    __m512 m = x.v[0];
    for (int u = 1; u < U; ++u) m = _mm512_max_ps(m, x.v[u]);
    return _mm512_reduce_max_ps(m);
  }
  TF_INLINE static float ReduceAdd(V x) {
    __m512 m = x.v[0];
    for (int u = 1; u < U; ++u) m = _mm512_add_ps(m, x.v[u]);
    return _mm512_reduce_add_ps(m);
  }
  TF_EXP_ACTIVATIONS_BODY
  using One = Avx512<1>;
  TF_RUN_BODIES
};
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
template <int U>
struct Avx2 {
  static constexpr int kLanes = 8;
  TF_ELEMENTWISE_OPS(__m256, _mm256)
  // n = round(x log2e) (-x with kNegate) by the float adder: t = x log2e +
  // 1.5 2^23 + 127 leaves n + 127 in t's low mantissa bits (rounded to
  // nearest), so n = t - (1.5 2^23 + 127) and 2^n is t shifted into the
  // exponent field (n in [-126, 127] after exp's clamp): three operations
  // where round, convert, add and shift took five (SiLU and tanh-GELU 4-7 %
  // faster on Zen 3).
  template <bool kNegate>
  TF_INLINE static void Split(V x, V* n, V* s) {
    const __m256 magic = _mm256_set1_ps(12582912.0f + 127.0f), log2e = _mm256_set1_ps(kLog2e);
    _Pragma("GCC unroll 8") for (int u = 0; u < U; ++u) {
      const __m256 t =
          kNegate ? _mm256_fnmadd_ps(x.v[u], log2e, magic) : _mm256_fmadd_ps(x.v[u], log2e, magic);
      n->v[u] = _mm256_sub_ps(t, magic);
      s->v[u] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t), 23));
    }
  }
  // e * 2^n from Split's 2^n, and e * 2^n + c.
  TF_INLINE static V Scale(V e, V s) { return Mul(e, s); }
  TF_INLINE static V ScaleAdd(V e, V s, V c) { return Fmadd(e, s, c); }
  TF_INLINE static V Rcp(V d) { TF_EACH(_mm256_rcp_ps(d.v[u])); }
  // num / den as a divide: the divider runs beside the multiply/FMA ports,
  // which exp already fills (13 of SiLU's operations per register with the
  // reciprocal's 3). SiLU and tanh-GELU epilogues 4-7 % faster on Zen 3
  // (bench/runtime_ops_bench, the fastest of 8 alternating runs), exact.
  TF_INLINE static V Over(V num, V den) { TF_EACH(_mm256_div_ps(num.v[u], den.v[u])); }
  TF_INLINE static V Abs(V x) { TF_EACH(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x.v[u])); }
  TF_INLINE static V CopySign(V magnitude, V sign) {
    const __m256 mask = _mm256_set1_ps(-0.0f);
    TF_EACH(_mm256_or_ps(magnitude.v[u], _mm256_and_ps(sign.v[u], mask)));
  }
  // Register u's lanes below count - u kLanes (count < U kLanes); the
  // others `fill` (loads) or untouched (stores) or zero.
  TF_INLINE static __m256i Below(int64_t count, int u) {
    const int64_t lanes = std::clamp<int64_t>(count - u * kLanes, 0, kLanes);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(lanes)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  TF_INLINE static V LoadPartial(const float* p, int64_t count, float fill) {
    TF_EACH(_mm256_blendv_ps(_mm256_set1_ps(fill),
                             _mm256_maskload_ps(p + u * kLanes, Below(count, u)),
                             _mm256_castsi256_ps(Below(count, u))));
  }
  // Through the stack: a masked store (vmaskmovps) costs a dozen cycles
  // per register on Zen 1, where each row's tail paid it twice.
  TF_INLINE static void StorePartial(float* p, V x, int64_t count) {
    float block[U * kLanes];
    Store(block, x);
    std::copy(block, block + count, p);
  }
  TF_INLINE static V ZeroPast(V x, int64_t count) {
    TF_EACH(_mm256_and_ps(x.v[u], _mm256_castsi256_ps(Below(count, u))));
  }
  // The U registers' lanes folded by Op (its 256- and 128-bit forms).
  template <typename Op>
  TF_INLINE static float Reduce(V x) {
    const Op op;
    __m256 v = x.v[0];
    for (int u = 1; u < U; ++u) v = op(v, x.v[u]);
    __m128 m = op(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = op(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(op(m, _mm_shuffle_ps(m, m, 1)));
  }
  struct MaxOp {
    TF_INLINE __m256 operator()(__m256 a, __m256 b) const { return _mm256_max_ps(a, b); }
    TF_INLINE __m128 operator()(__m128 a, __m128 b) const { return _mm_max_ps(a, b); }
  };
  struct AddOp {
    TF_INLINE __m256 operator()(__m256 a, __m256 b) const { return _mm256_add_ps(a, b); }
    TF_INLINE __m128 operator()(__m128 a, __m128 b) const { return _mm_add_ps(a, b); }
  };
  TF_INLINE static float ReduceMax(V x) { return Reduce<MaxOp>(x); }
  TF_INLINE static float ReduceAdd(V x) { return Reduce<AddOp>(x); }
  TF_EXP_ACTIVATIONS_BODY
  using One = Avx2<1>;
  TF_RUN_BODIES
};
#pragma GCC pop_options

#undef TF_EACH
#undef TF_ELEMENTWISE_OPS
#undef TF_INLINE
#undef TF_EXP_ACTIVATIONS_BODY
#undef TF_RUN_BODIES
#pragma GCC diagnostic pop

// Four registers per value: on Zen 1, SiLU over 1.2 M floats in one thread
// took 1.55 ns per float with one, 1.28 with two and 1.08 with four.
constexpr int kUnroll = 4;

template <typename Isa, PointwiseFunc kFunc>
FusedEpilogueFn EpilogueWith(EpilogueBias bias, bool residual) {
  switch (bias) {
    case EpilogueBias::kNone:
      return residual ? &Isa::template Epilogue<kFunc, 0, true>
                      : &Isa::template Epilogue<kFunc, 0, false>;
    case EpilogueBias::kPerPosition:
      return residual ? &Isa::template Epilogue<kFunc, 1, true>
                      : &Isa::template Epilogue<kFunc, 1, false>;
    case EpilogueBias::kPeriodic:
      return residual ? &Isa::template Epilogue<kFunc, 2, true>
                      : &Isa::template Epilogue<kFunc, 2, false>;
  }
  return nullptr;
}

template <typename Isa>
FusedEpilogueFn EpilogueOf(PointwiseFunc func, EpilogueBias bias, bool residual) {
  switch (func) {
    case PointwiseFunc::kNone:
      return EpilogueWith<Isa, PointwiseFunc::kNone>(bias, residual);
    case PointwiseFunc::kRelu:
      return EpilogueWith<Isa, PointwiseFunc::kRelu>(bias, residual);
    case PointwiseFunc::kClip:
      return EpilogueWith<Isa, PointwiseFunc::kClip>(bias, residual);
    case PointwiseFunc::kHardSigmoid:
      return EpilogueWith<Isa, PointwiseFunc::kHardSigmoid>(bias, residual);
    case PointwiseFunc::kHardSwish:
      return EpilogueWith<Isa, PointwiseFunc::kHardSwish>(bias, residual);
    case PointwiseFunc::kExp:
      return EpilogueWith<Isa, PointwiseFunc::kExp>(bias, residual);
    case PointwiseFunc::kSigmoid:
      return EpilogueWith<Isa, PointwiseFunc::kSigmoid>(bias, residual);
    case PointwiseFunc::kSilu:
      return EpilogueWith<Isa, PointwiseFunc::kSilu>(bias, residual);
    case PointwiseFunc::kTanh:
      return EpilogueWith<Isa, PointwiseFunc::kTanh>(bias, residual);
    case PointwiseFunc::kGelu:
      return EpilogueWith<Isa, PointwiseFunc::kGelu>(bias, residual);
    case PointwiseFunc::kGeluTanh:
      return EpilogueWith<Isa, PointwiseFunc::kGeluTanh>(bias, residual);
    default:
      return nullptr;
  }
}

// out = func(in): the epilogue with no bias and no residual.
template <typename Isa>
bool RunOn(PointwiseFunc func, const float* in, float* out, int64_t n) {
  if (!IsExpActivation(func)) return false;
  EpilogueOf<Isa>(func, EpilogueBias::kNone, false)(in, out, nullptr, 0, nullptr, n, 0.0f, 0.0f);
  return true;
}

}  // namespace

FusedEpilogueFn FusedEpilogueOn(VectorIsa isa, PointwiseFunc func, EpilogueBias bias, bool residual,
                                int64_t period) {
  if (!CpuHas(isa)) return nullptr;
  const int64_t lanes = isa == VectorIsa::kAvx512 ? 16 : 8;
  if (bias == EpilogueBias::kPeriodic &&
      (period < 1 || (period % lanes != 0 && lanes % period != 0))) {
    return nullptr;
  }
  return isa == VectorIsa::kAvx512 ? EpilogueOf<Avx512<kUnroll>>(func, bias, residual)
                                   : EpilogueOf<Avx2<kUnroll>>(func, bias, residual);
}

FusedEpilogueFn FusedEpilogue(PointwiseFunc func, EpilogueBias bias, bool residual,
                              int64_t period) {
  return FusedEpilogueOn(CpuHas(VectorIsa::kAvx512) ? VectorIsa::kAvx512 : VectorIsa::kAvx2, func,
                         bias, residual, period);
}

bool CpuHas(VectorIsa isa) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return isa == VectorIsa::kAvx512 ? avx512 : avx2;
}

bool ExpActivationRunOn(VectorIsa isa, PointwiseFunc func, const float* in, float* out, int64_t n) {
  if (!CpuHas(isa)) return false;
  return isa == VectorIsa::kAvx512 ? RunOn<Avx512<kUnroll>>(func, in, out, n)
                                   : RunOn<Avx2<kUnroll>>(func, in, out, n);
}

bool ExpActivationRun(PointwiseFunc func, const float* in, float* out, int64_t n) {
  if (!IsExpActivation(func)) return false;
  return ExpActivationRunOn(CpuHas(VectorIsa::kAvx512) ? VectorIsa::kAvx512 : VectorIsa::kAvx2,
                            func, in, out, n);
}

bool SoftmaxRowsRunOn(VectorIsa isa, const float* in, float* out, int64_t rows, int64_t n) {
  if (!CpuHas(isa)) return false;
  for (int64_t r = 0; r < rows; ++r) {
    if (isa == VectorIsa::kAvx512) {
      Avx512<kUnroll>::SoftmaxRow(in + r * n, out + r * n, n);
    } else {
      Avx2<kUnroll>::SoftmaxRow(in + r * n, out + r * n, n);
    }
  }
  return true;
}

bool SoftmaxRowsRun(const float* in, float* out, int64_t rows, int64_t n) {
  return SoftmaxRowsRunOn(CpuHas(VectorIsa::kAvx512) ? VectorIsa::kAvx512 : VectorIsa::kAvx2, in,
                          out, rows, n);
}

#else  // not x86-64 with GCC's intrinsics: the portable loops run

bool CpuHas(VectorIsa) { return false; }
bool ExpActivationRunOn(VectorIsa, PointwiseFunc, const float*, float*, int64_t) { return false; }
bool ExpActivationRun(PointwiseFunc, const float*, float*, int64_t) { return false; }
bool SoftmaxRowsRunOn(VectorIsa, const float*, float*, int64_t, int64_t) { return false; }
bool SoftmaxRowsRun(const float*, float*, int64_t, int64_t) { return false; }
FusedEpilogueFn FusedEpilogueOn(VectorIsa, PointwiseFunc, EpilogueBias, bool, int64_t) {
  return nullptr;
}
FusedEpilogueFn FusedEpilogue(PointwiseFunc, EpilogueBias, bool, int64_t) { return nullptr; }

#endif

}  // namespace runtime_ops
}  // namespace tunefleet
