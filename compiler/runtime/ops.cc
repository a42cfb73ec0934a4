#include "compiler/runtime/ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace tunefleet {
namespace {

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

// The runtime runs on any x86-64, so it is built for the baseline; its
// hot loops are also built for AVX2 and AVX-512, picked when the library
// loads (GCC's function multiversioning), and vectorised (-O3 in BUILD).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TF_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define TF_VECTOR_CLONES
#endif

// exp(x) in fp32 that GCC vectorises (no libm call): 2^n * e^r with
// |r| <= ln2/2, Cephes' degree-6 polynomial; relative error about 1e-7 over
// [-87, 88] (inputs outside are clamped there).
inline float VecExp(float x) {
  x = std::min(std::max(x, -87.3f), 88.7f);
  const float n = std::floor(x * 1.44269504088896341f + 0.5f);
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return e * scale;
}

// erf(x), Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
inline float VecErf(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float y = 1.0f - p * t * VecExp(-a * a);
  return std::copysign(y, x);
}

// One function of one value (plan.h Activation); kFunc is fixed per
// instantiation so each loop below is branch-free and vectorised.
template <PointwiseFunc kFunc>
inline float Pointwise(float x, float alpha, float beta) {
  if constexpr (kFunc == PointwiseFunc::kRelu) return x > 0 ? x : 0.0f;
  if constexpr (kFunc == PointwiseFunc::kClip) return std::min(std::max(x, alpha), beta);
  if constexpr (kFunc == PointwiseFunc::kSqrt) return std::sqrt(x);
  if constexpr (kFunc == PointwiseFunc::kExp) return VecExp(x);
  if constexpr (kFunc == PointwiseFunc::kErf) return VecErf(x);
  if constexpr (kFunc == PointwiseFunc::kTanh) return 1.0f - 2.0f / (VecExp(2.0f * x) + 1.0f);
  if constexpr (kFunc == PointwiseFunc::kSigmoid) return 1.0f / (1.0f + VecExp(-x));
  if constexpr (kFunc == PointwiseFunc::kNeg) return -x;
  if constexpr (kFunc == PointwiseFunc::kHardSigmoid) {
    return std::max(0.0f, std::min(1.0f, alpha * x + beta));
  }
  if constexpr (kFunc == PointwiseFunc::kHardSwish) {
    return x * std::max(0.0f, std::min(1.0f, alpha * x + beta));
  }
  if constexpr (kFunc == PointwiseFunc::kLeakyRelu) return x < 0 ? alpha * x : x;
  if constexpr (kFunc == PointwiseFunc::kElu) return x < 0 ? alpha * (VecExp(x) - 1.0f) : x;
  if constexpr (kFunc == PointwiseFunc::kAbs) return std::fabs(x);
  if constexpr (kFunc == PointwiseFunc::kFloor) return std::floor(x);
  if constexpr (kFunc == PointwiseFunc::kCeil) return std::ceil(x);
  if constexpr (kFunc == PointwiseFunc::kReciprocal) return 1.0f / x;
  if constexpr (kFunc == PointwiseFunc::kGelu) return 0.5f * x * (1.0f + VecErf(x * 0.70710678f));
  if constexpr (kFunc == PointwiseFunc::kGeluTanh) {
    const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (2.0f - 2.0f / (VecExp(2.0f * u) + 1.0f));
  }
  if constexpr (kFunc == PointwiseFunc::kSilu) return x / (1.0f + VecExp(-x));
  return x;
}

template <PointwiseFunc kFunc>
TF_VECTOR_CLONES void PointwiseRun(const float* __restrict in, float* __restrict out, int64_t n,
                                   float alpha, float beta) {
  for (int64_t i = 0; i < n; ++i) out[i] = Pointwise<kFunc>(in[i], alpha, beta);
}
// In place (`in` and `out` the same buffer: no __restrict).
template <PointwiseFunc kFunc>
TF_VECTOR_CLONES void PointwiseInPlace(float* v, int64_t n, float alpha, float beta) {
  for (int64_t i = 0; i < n; ++i) v[i] = Pointwise<kFunc>(v[i], alpha, beta);
}

using PointwiseRunFn = void (*)(const float*, float*, int64_t, float, float);
using PointwiseInPlaceFn = void (*)(float*, int64_t, float, float);

template <template <PointwiseFunc> class Pick>
auto ForFunc(PointwiseFunc func) {
  switch (func) {
    case PointwiseFunc::kNone:
      return Pick<PointwiseFunc::kNone>::fn;
    case PointwiseFunc::kRelu:
      return Pick<PointwiseFunc::kRelu>::fn;
    case PointwiseFunc::kClip:
      return Pick<PointwiseFunc::kClip>::fn;
    case PointwiseFunc::kSqrt:
      return Pick<PointwiseFunc::kSqrt>::fn;
    case PointwiseFunc::kExp:
      return Pick<PointwiseFunc::kExp>::fn;
    case PointwiseFunc::kErf:
      return Pick<PointwiseFunc::kErf>::fn;
    case PointwiseFunc::kTanh:
      return Pick<PointwiseFunc::kTanh>::fn;
    case PointwiseFunc::kSigmoid:
      return Pick<PointwiseFunc::kSigmoid>::fn;
    case PointwiseFunc::kNeg:
      return Pick<PointwiseFunc::kNeg>::fn;
    case PointwiseFunc::kHardSigmoid:
      return Pick<PointwiseFunc::kHardSigmoid>::fn;
    case PointwiseFunc::kHardSwish:
      return Pick<PointwiseFunc::kHardSwish>::fn;
    case PointwiseFunc::kLeakyRelu:
      return Pick<PointwiseFunc::kLeakyRelu>::fn;
    case PointwiseFunc::kElu:
      return Pick<PointwiseFunc::kElu>::fn;
    case PointwiseFunc::kAbs:
      return Pick<PointwiseFunc::kAbs>::fn;
    case PointwiseFunc::kFloor:
      return Pick<PointwiseFunc::kFloor>::fn;
    case PointwiseFunc::kCeil:
      return Pick<PointwiseFunc::kCeil>::fn;
    case PointwiseFunc::kReciprocal:
      return Pick<PointwiseFunc::kReciprocal>::fn;
    case PointwiseFunc::kGelu:
      return Pick<PointwiseFunc::kGelu>::fn;
    case PointwiseFunc::kGeluTanh:
      return Pick<PointwiseFunc::kGeluTanh>::fn;
    case PointwiseFunc::kSilu:
      return Pick<PointwiseFunc::kSilu>::fn;
  }
  return Pick<PointwiseFunc::kNone>::fn;
}
template <PointwiseFunc kFunc>
struct PickRun {
  static constexpr PointwiseRunFn fn = &PointwiseRun<kFunc>;
};
template <PointwiseFunc kFunc>
struct PickInPlace {
  static constexpr PointwiseInPlaceFn fn = &PointwiseInPlace<kFunc>;
};

// One (outer, channel block) row of an epilogue: `inner` positions of
// `block` lanes; kAct 0 none, 1 relu, 2 clip (any other activation runs
// after, over the row, while it is still in cache). The cases are separate
// instantiations so each inner loop is branch-free.
template <int kAct, bool kBias, bool kResidual>
TF_VECTOR_CLONES void EpilogueRow(float* __restrict out, const float* __restrict bias,
                                  const float* __restrict residual, int64_t inner, int64_t block,
                                  float lo, float hi) {
  for (int64_t i = 0; i < inner; ++i) {
    float* __restrict v = out + i * block;
    for (int64_t l = 0; l < block; ++l) {
      float x = v[l];
      if constexpr (kBias) x += bias[l];
      if constexpr (kResidual) x += residual[i * block + l];
      if constexpr (kAct == 1) x = x > 0 ? x : 0;
      if constexpr (kAct == 2) x = std::min(std::max(x, lo), hi);
      v[l] = x;
    }
  }
}

using EpilogueRowFn = void (*)(float*, const float*, const float*, int64_t, int64_t, float, float);

template <int kAct>
EpilogueRowFn EpilogueRowFor(bool bias, bool residual) {
  if (bias) return residual ? &EpilogueRow<kAct, true, true> : &EpilogueRow<kAct, true, false>;
  return residual ? &EpilogueRow<kAct, false, true> : &EpilogueRow<kAct, false, false>;
}

// out[x * out_stride + i] = in[x * in_stride + i] for i < run, x < count.
TF_VECTOR_CLONES void CopyRuns(const float* __restrict in, int64_t in_stride, float* __restrict out,
                               int64_t out_stride, int64_t run, int64_t count) {
  for (int64_t x = 0; x < count; ++x) {
    for (int64_t i = 0; i < run; ++i) out[x * out_stride + i] = in[x * in_stride + i];
  }
}

TF_VECTOR_CLONES void AddRun(const float* __restrict a, const float* __restrict b,
                             float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

// One row of `width` positions of `block` lanes, each lane with its own b.
template <BinaryFunc kFunc>
TF_VECTOR_CLONES void ChannelRow(const float* __restrict a, const float* __restrict b,
                                 float* __restrict out, int64_t width, int64_t block) {
  if (block == 1) {
    const float s = b[0];
    for (int64_t x = 0; x < width; ++x) {
      if constexpr (kFunc == BinaryFunc::kMul) out[x] = a[x] * s;
      if constexpr (kFunc == BinaryFunc::kAdd) out[x] = a[x] + s;
      if constexpr (kFunc == BinaryFunc::kSub) out[x] = a[x] - s;
      if constexpr (kFunc == BinaryFunc::kDiv) out[x] = a[x] / s;
    }
    return;
  }
  for (int64_t x = 0; x < width; ++x) {
    for (int64_t l = 0; l < block; ++l) {
      const float v = a[x * block + l], s = b[l];
      float r = v;
      if constexpr (kFunc == BinaryFunc::kMul) r = v * s;
      if constexpr (kFunc == BinaryFunc::kAdd) r = v + s;
      if constexpr (kFunc == BinaryFunc::kSub) r = v - s;
      if constexpr (kFunc == BinaryFunc::kDiv) r = v / s;
      out[x * block + l] = r;
    }
  }
}

using ChannelRowFn = void (*)(const float*, const float*, float*, int64_t, int64_t);

ChannelRowFn ChannelRowFor(BinaryFunc func) {
  switch (func) {
    case BinaryFunc::kAdd:
      return &ChannelRow<BinaryFunc::kAdd>;
    case BinaryFunc::kSub:
      return &ChannelRow<BinaryFunc::kSub>;
    case BinaryFunc::kDiv:
      return &ChannelRow<BinaryFunc::kDiv>;
    default:
      return &ChannelRow<BinaryFunc::kMul>;
  }
}

// Softmax of one contiguous row of n values.
TF_VECTOR_CLONES void SoftmaxRow(const float* __restrict in, float* __restrict out, int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) max = std::max(max, in[i]);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = VecExp(in[i] - max);
    sum += out[i];
  }
  const float scale = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) out[i] *= scale;
}

// A pooling window over a [H, in_w, b] channel block.
struct PoolWindow {
  int64_t h, w, in_w, b, ow;
  int64_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool count_include_pad;

  // Taps of a window starting at y0 (x0) that fall inside the image, or
  // (count_include_pad) inside the padded image.
  int64_t RowTaps(int64_t y0, bool padded) const { return Taps(y0, kh, dh, padded ? -pt : 0, padded ? h + pb : h); }
  int64_t ColTaps(int64_t x0, bool padded) const { return Taps(x0, kw, dw, padded ? -pl : 0, padded ? w + pr : w); }
  static int64_t Taps(int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi) {
    int64_t n = 0;
    for (int64_t i = 0; i < k; ++i) n += start + i * d >= lo && start + i * d < hi;
    return n;
  }
};

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Output row y of one channel block (`src` its input block, `dst` its
// output row): lanes innermost, one call per row so the taps inline.
template <bool kMax>
TF_VECTOR_CLONES void PoolRow(const PoolWindow& g, const float* __restrict src,
                              float* __restrict dst, int64_t y) {
  const int64_t b = g.b, y0 = y * g.sh - g.pt;
  for (int64_t x = 0; x < g.ow; ++x) {
    const int64_t x0 = x * g.sw - g.pl;
    float* __restrict o = dst + x * b;
    for (int64_t l = 0; l < b; ++l) o[l] = kMax ? -std::numeric_limits<float>::infinity() : 0;
    for (int64_t r = 0; r < g.kh; ++r) {
      const int64_t iy = y0 + r * g.dh;
      if (iy < 0 || iy >= g.h) continue;
      for (int64_t s = 0; s < g.kw; ++s) {
        const int64_t ix = x0 + s * g.dw;
        if (ix < 0 || ix >= g.w) continue;
        const float* __restrict v = src + (iy * g.in_w + ix) * b;
        for (int64_t l = 0; l < b; ++l) o[l] = kMax ? std::max(o[l], v[l]) : o[l] + v[l];
      }
    }
    if (!kMax) {
      // ONNX counts the padded window (clipped to the padded input) when
      // count_include_pad, else only the taps inside the image.
      const bool padded = g.count_include_pad;
      const int64_t window = g.RowTaps(y0, padded) * g.ColTaps(x0, padded);
      for (int64_t l = 0; l < b; ++l) o[l] = window > 0 ? o[l] / window : 0.0f;
    }
  }
}

// The same for NCHW (one lane): taps outermost and the row's columns
// innermost, so a stride-1 window vectorises across the output row.
template <bool kMax>
TF_VECTOR_CLONES void PoolRowPlain(const PoolWindow& g, const float* __restrict src,
                                   float* __restrict dst, int64_t y) {
  const int64_t y0 = y * g.sh - g.pt;
  for (int64_t x = 0; x < g.ow; ++x) dst[x] = kMax ? -std::numeric_limits<float>::infinity() : 0;
  for (int64_t r = 0; r < g.kh; ++r) {
    const int64_t iy = y0 + r * g.dh;
    if (iy < 0 || iy >= g.h) continue;
    const float* __restrict row = src + iy * g.in_w;
    for (int64_t s = 0; s < g.kw; ++s) {
      const int64_t offset = s * g.dw - g.pl;  // ix = x * sw + offset
      const int64_t lo = std::max<int64_t>(0, CeilDiv(-offset, g.sw));
      const int64_t hi = std::min<int64_t>(g.ow, CeilDiv(g.w - offset, g.sw));
      if (g.sw == 1) {
        const float* __restrict v = row + offset;
        for (int64_t x = lo; x < hi; ++x) dst[x] = kMax ? std::max(dst[x], v[x]) : dst[x] + v[x];
      } else {
        for (int64_t x = lo; x < hi; ++x) {
          const float v = row[x * g.sw + offset];
          dst[x] = kMax ? std::max(dst[x], v) : dst[x] + v;
        }
      }
    }
  }
  if (!kMax) {
    const bool padded = g.count_include_pad;
    const int64_t rows = g.RowTaps(y0, padded);
    for (int64_t x = 0; x < g.ow; ++x) {
      const int64_t window = rows * g.ColTaps(x * g.sw - g.pl, padded);
      dst[x] = window > 0 ? dst[x] / window : 0.0f;
    }
  }
}

}  // namespace

void ApplyEpilogue(const PlanEpilogue& e, const float* bias, const float* residual, float* y,
                   int64_t elements, const TfRuntime* rt) {
  const int64_t block = e.block, inner = e.inner;
  const int64_t blocks = e.channels / block;
  const int64_t rows = elements / (inner * block);  // (outer, channel block) pairs
  const PointwiseFunc func = e.activation.func;
  const int act = func == PointwiseFunc::kRelu ? 1 : func == PointwiseFunc::kClip ? 2 : 0;
  const float alpha = e.activation.alpha, beta = e.activation.beta;
  const EpilogueRowFn row_fn = act == 1   ? EpilogueRowFor<1>(bias, residual)
                               : act == 2 ? EpilogueRowFor<2>(bias, residual)
                                          : EpilogueRowFor<0>(bias, residual);
  const PointwiseInPlaceFn after = act == 0 ? ForFunc<PickInPlace>(func) : nullptr;
  const bool adds = bias != nullptr || residual != nullptr;
  ParallelFor(rt, rows, elements, [&](int64_t row) {
    float* out = y + row * inner * block;
    if (adds || act != 0) {
      row_fn(out, bias ? bias + (row % blocks) * block : nullptr,
             residual ? residual + row * inner * block : nullptr, inner, block, alpha, beta);
    }
    if (after != nullptr && func != PointwiseFunc::kNone) after(out, inner * block, alpha, beta);
  });
}

void Relayout(const PlanBuffer& src_layout, const float* src, const PlanBuffer& dst_layout,
              float* dst, const TfRuntime* rt) {
  const int64_t n = dst_layout.shape[0], c = dst_layout.shape[1], h = dst_layout.shape[2],
                w = dst_layout.shape[3];
  const int64_t sb = src_layout.block, sw = src_layout.RowWidth();
  const int64_t db = dst_layout.block, dw = dst_layout.RowWidth();
  // One destination row (n, channel block, y) per task.
  ParallelFor(rt, n * (c / db) * h, n * c * h * w, [&](int64_t t) {
    const int64_t y = t % h, cb = (t / h) % (c / db), image = t / (h * (c / db));
    float* out = dst + t * dw * db;
    if (sb == db) {  // only the rows' width changes
      std::memcpy(out, src + (((image * (c / sb) + cb) * h + y) * sw) * sb, w * db * sizeof(float));
      return;
    }
    if (std::min(sb, db) >= 4) {
      // Between blocked layouts: each pixel's lanes are runs of channels
      // contiguous on both sides (a source block's share of the destination's).
      for (int64_t l = 0; l < db;) {
        const int64_t ch = cb * db + l, run = std::min(sb - ch % sb, db - l);
        const float* in = src + (((image * (c / sb) + ch / sb) * h + y) * sw) * sb + ch % sb;
        CopyRuns(in, sb, out + l, db, run, w);
        l += run;
      }
      return;
    }
    for (int64_t l = 0; l < db; ++l) {
      const int64_t ch = cb * db + l;
      const float* in = src + (((image * (c / sb) + ch / sb) * h + y) * sw) * sb + ch % sb;
      for (int64_t x = 0; x < w; ++x) out[x * db + l] = in[x * sb];
    }
  });
}

void Pool(const PlanStep& step, const PlanBuffer& in_layout, const float* in,
          const PlanBuffer& out_layout, float* out, const TfRuntime* rt) {
  const int64_t n = step.in_shape[0], c = step.in_shape[1], h = step.in_shape[2],
                w = step.in_shape[3];
  const int64_t oh = step.out_shape[2], ow = step.out_shape[3];
  const int64_t b = in_layout.block, in_w = in_layout.RowWidth();
  const int64_t blocks = c / b;
  if (step.op == StepOp::kGlobalAvgPool) {
    // Out is [N, C] (its 1x1 rows make every block size the same order).
    ParallelFor(rt, n * blocks, n * c * h * w, [&](int64_t nb) {
      const float* src = in + nb * h * in_w * b;
      for (int64_t l = 0; l < b; ++l) {
        double sum = 0;
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < w; ++x) sum += src[(y * in_w + x) * b + l];
        }
        out[nb * b + l] = static_cast<float>(sum / static_cast<double>(h * w));
      }
    });
    return;
  }
  const int64_t out_w = out_layout.RowWidth();
  const std::vector<int64_t>&k = step.kernel_shape, &st = step.strides, &p = step.pads;
  const int64_t dh = step.dilations.empty() ? 1 : step.dilations[0];
  const int64_t dw = step.dilations.empty() ? 1 : step.dilations[1];
  const PoolWindow window{h,     w,    in_w, b,    ow,   k[0], k[1], st[0],
                          st[1], p[0], p[1], p[2], p[3], dh,   dw,   step.count_include_pad};
  const bool max = step.op == StepOp::kMaxPool;
  const auto row = b == 1 ? (max ? &PoolRowPlain<true> : &PoolRowPlain<false>)
                          : (max ? &PoolRow<true> : &PoolRow<false>);
  // One output row (n, channel block, y) per task.
  ParallelFor(rt, n * blocks * oh, n * c * oh * ow * k[0] * k[1], [&](int64_t t) {
    row(window, in + (t / oh) * h * in_w * b, out + t * out_w * b, t % oh);
  });
}

void Elementwise(const PlanStep& step, const float* a, const float* b, float* out,
                 int64_t elements, const TfRuntime* rt) {
  // Chunks of 16 Ki floats: enough work per task to pay for its scheduling.
  constexpr int64_t kChunk = 16384;
  const int64_t chunks = (elements + kChunk - 1) / kChunk;
  if (step.op == StepOp::kAdd) {
    ParallelFor(rt, chunks, elements, [&](int64_t t) {
      const int64_t begin = t * kChunk, n = std::min(elements - begin, kChunk);
      AddRun(a + begin, b + begin, out + begin, n);
    });
  } else if (step.op == StepOp::kPointwise) {
    const PointwiseRunFn fn = ForFunc<PickRun>(step.activation.func);
    const float alpha = step.activation.alpha, beta = step.activation.beta;
    ParallelFor(rt, chunks, elements, [&](int64_t t) {
      const int64_t begin = t * kChunk, n = std::min(elements - begin, kChunk);
      fn(a + begin, out + begin, n, alpha, beta);
    });
  } else {  // copy
    std::copy(a, a + elements, out);
  }
}

void ChannelBinary(const PlanStep& step, const PlanBuffer& layout, const float* a, const float* b,
                   float* out, const TfRuntime* rt) {
  const int64_t n = layout.shape[0], c = layout.shape[1], h = layout.shape[2];
  const int64_t block = layout.block, row = layout.RowWidth() * block;
  const int64_t blocks = c / block;
  const int64_t b_image = step.in_shape[0] == 1 ? 0 : c;
  const ChannelRowFn fn = ChannelRowFor(step.binary);
  ParallelFor(rt, n * blocks * h, n * c * h * layout.RowWidth(), [&](int64_t t) {
    const int64_t image = t / (blocks * h), cb = (t / h) % blocks;
    fn(a + t * row, b + image * b_image + cb * block, out + t * row, row / block, block);
  });
}

void Softmax(const PlanStep& step, const float* in, float* out, const TfRuntime* rt) {
  const int64_t outer = step.in_shape[0], axis = step.in_shape[1], inner = step.in_shape[2];
  if (inner == 1) {
    // The last axis (attention's scores): one contiguous row per task.
    const int64_t rows_per_task = std::max<int64_t>(1, 4096 / std::max<int64_t>(axis, 1));
    ParallelFor(rt, (outer + rows_per_task - 1) / rows_per_task, outer * axis, [&](int64_t t) {
      const int64_t end = std::min(outer, (t + 1) * rows_per_task);
      for (int64_t o = t * rows_per_task; o < end; ++o) {
        SoftmaxRow(in + o * axis, out + o * axis, axis);
      }
    });
    return;
  }
  ParallelFor(rt, outer, outer * axis * inner, [&](int64_t o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* src = in + o * axis * inner + i;
      float* dst = out + o * axis * inner + i;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t a = 0; a < axis; ++a) max = std::max(max, src[a * inner]);
      double sum = 0;
      for (int64_t a = 0; a < axis; ++a) {
        dst[a * inner] = VecExp(src[a * inner] - max);
        sum += dst[a * inner];
      }
      for (int64_t a = 0; a < axis; ++a) dst[a * inner] = static_cast<float>(dst[a * inner] / sum);
    }
  });
}

}  // namespace tunefleet

namespace tunefleet {
namespace {

// Calls fn(out_row, a_row_offset, b_row_offset) for each row (every index
// but the last) of step.out_shape, rows split over the runtime's pool.
template <typename Fn>
void ForEachRow(const PlanStep& step, const TfRuntime* rt, Fn fn) {
  const std::vector<int64_t>& shape = step.out_shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= shape[d];
  const int64_t width = rank > 0 ? shape[rank - 1] : 1;
  // Enough rows per task that scheduling costs little against the copy.
  const int64_t rows_per_task = std::max<int64_t>(1, 4096 / std::max<int64_t>(width, 1));
  const int64_t tasks = (rows + rows_per_task - 1) / rows_per_task;
  ParallelFor(rt, tasks, rows * width, [&](int64_t task) {
    const int64_t end = std::min(rows, (task + 1) * rows_per_task);
    for (int64_t row = task * rows_per_task; row < end; ++row) {
      int64_t a = step.a_offset, b = 0, rest = row;
      for (int64_t d = rank - 2; d >= 0; --d) {
        const int64_t i = rest % shape[d];
        rest /= shape[d];
        if (!step.a_strides.empty()) a += i * step.a_strides[d];
        if (!step.b_strides.empty()) b += i * step.b_strides[d];
      }
      fn(row * width, a, b);
    }
  });
}

int64_t LastStride(const std::vector<int64_t>& strides) {
  return strides.empty() ? 1 : strides.back();
}

template <typename Op>
void BinaryRow(const float* a, int64_t sa, const float* b, int64_t sb, float* o, int64_t n, Op op) {
  for (int64_t x = 0; x < n; ++x) o[x] = op(a[x * sa], b[x * sb]);
}

}  // namespace

namespace {

std::vector<int64_t> RowMajorStridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

// Reduces `axis` rows of `inner` values each (stride `inner`) into out[inner].
template <ReduceFunc kFunc>
TF_VECTOR_CLONES void ReduceRows(const float* __restrict in, float* __restrict out, int64_t axis,
                                 int64_t inner) {
  for (int64_t i = 0; i < inner; ++i) {
    out[i] = kFunc == ReduceFunc::kMax   ? -std::numeric_limits<float>::infinity()
             : kFunc == ReduceFunc::kMin ? std::numeric_limits<float>::infinity()
                                         : 0.0f;
  }
  for (int64_t a = 0; a < axis; ++a) {
    const float* __restrict row = in + a * inner;
    for (int64_t i = 0; i < inner; ++i) {
      if constexpr (kFunc == ReduceFunc::kMax) {
        out[i] = std::max(out[i], row[i]);
      } else if constexpr (kFunc == ReduceFunc::kMin) {
        out[i] = std::min(out[i], row[i]);
      } else {
        out[i] += row[i];
      }
    }
  }
  if (kFunc == ReduceFunc::kMean) {
    const float scale = 1.0f / static_cast<float>(axis);
    for (int64_t i = 0; i < inner; ++i) out[i] *= scale;
  }
}

// One contiguous run of n values to one (inner == 1).
template <ReduceFunc kFunc>
TF_VECTOR_CLONES float ReduceRun(const float* __restrict in, int64_t n) {
  float acc = kFunc == ReduceFunc::kMax   ? -std::numeric_limits<float>::infinity()
              : kFunc == ReduceFunc::kMin ? std::numeric_limits<float>::infinity()
                                          : 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kFunc == ReduceFunc::kMax) {
      acc = std::max(acc, in[i]);
    } else if constexpr (kFunc == ReduceFunc::kMin) {
      acc = std::min(acc, in[i]);
    } else {
      acc += in[i];
    }
  }
  return kFunc == ReduceFunc::kMean ? acc / static_cast<float>(n) : acc;
}

template <ReduceFunc kFunc>
void ReduceAll(const PlanStep& step, const float* in, float* out, const TfRuntime* rt) {
  const int64_t outer = step.in_shape[0], axis = step.in_shape[1], inner = step.in_shape[2];
  if (inner == 1) {
    const int64_t per_task = std::max<int64_t>(1, 16384 / std::max<int64_t>(axis, 1));
    ParallelFor(rt, (outer + per_task - 1) / per_task, outer * axis, [&](int64_t t) {
      for (int64_t o = t * per_task; o < std::min(outer, (t + 1) * per_task); ++o) {
        out[o] = ReduceRun<kFunc>(in + o * axis, axis);
      }
    });
    return;
  }
  ParallelFor(rt, outer, outer * axis * inner, [&](int64_t o) {
    ReduceRows<kFunc>(in + o * axis * inner, out + o * inner, axis, inner);
  });
}

void Reduce(const PlanStep& step, const float* in, float* out, const TfRuntime* rt) {
  switch (step.reduce) {
    case ReduceFunc::kMean:
      return ReduceAll<ReduceFunc::kMean>(step, in, out, rt);
    case ReduceFunc::kSum:
      return ReduceAll<ReduceFunc::kSum>(step, in, out, rt);
    case ReduceFunc::kMax:
      return ReduceAll<ReduceFunc::kMax>(step, in, out, rt);
    case ReduceFunc::kMin:
      return ReduceAll<ReduceFunc::kMin>(step, in, out, rt);
  }
}

// One row of a layer norm: (x - mean) / sqrt(var + eps) * scale + bias;
// returns the mean and 1 / sqrt(var + eps).
TF_VECTOR_CLONES std::pair<float, float> LayerNormRow(const float* __restrict x,
                                                      const float* __restrict scale,
                                                      const float* __restrict bias,
                                                      float* __restrict out, int64_t n,
                                                      float epsilon) {
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  float squares = 0;
  for (int64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(squares / static_cast<float>(n) + epsilon);
  for (int64_t i = 0; i < n; ++i) {
    float v = (x[i] - mean) * inv;
    if (scale != nullptr) v *= scale[i];
    if (bias != nullptr) v += bias[i];
    out[i] = v;
  }
  return {mean, inv};
}

// The input index an output coordinate reads along an axis of `dim`
// values with `before` padded in front, or -1 (kConstant outside).
int64_t PadSource(int64_t out_index, int64_t before, int64_t dim, PadMode mode) {
  int64_t i = out_index - before;
  if (i >= 0 && i < dim) return i;
  if (mode == PadMode::kConstant) return -1;
  if (mode == PadMode::kEdge) return std::clamp<int64_t>(i, 0, dim - 1);
  // kReflect: mirrored about the edges, not repeating them (dim > 1).
  const int64_t period = 2 * (dim - 1);
  if (period == 0) return 0;
  i = ((i % period) + period) % period;
  return i < dim ? i : period - i;
}

void Pad(const PlanStep& step, const float* in, float* out, const TfRuntime* rt) {
  const std::vector<int64_t>&in_dims = step.in_shape, &out_dims = step.out_shape;
  const int64_t rank = static_cast<int64_t>(out_dims.size());
  const int64_t width = rank > 0 ? out_dims[rank - 1] : 1;
  const int64_t in_width = rank > 0 ? in_dims[rank - 1] : 1;
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= out_dims[d];
  const std::vector<int64_t> in_strides = RowMajorStridesOf(in_dims);
  const int64_t before = rank > 0 ? step.pads[rank - 1] : 0;
  const float fill = step.alpha;
  ParallelFor(rt, rows, rows * width, [&](int64_t row) {
    float* dst = out + row * width;
    int64_t rest = row, at = 0;
    bool inside = true;
    for (int64_t d = rank - 2; d >= 0; --d) {
      const int64_t source = PadSource(rest % out_dims[d], step.pads[d], in_dims[d], step.pad_mode);
      rest /= out_dims[d];
      if (source < 0) inside = false;
      at += source * in_strides[d];
    }
    if (!inside) {
      std::fill(dst, dst + width, fill);
      return;
    }
    const float* src = in + at;
    for (int64_t x = 0; x < width; ++x) {
      const int64_t source = PadSource(x, before, in_width, step.pad_mode);
      dst[x] = source < 0 ? fill : src[source];
    }
  });
}

}  // namespace

bool IsTensorOp(StepOp op) {
  return op == StepOp::kStridedCopy || op == StepOp::kBroadcast || op == StepOp::kReduce ||
         op == StepOp::kConcat || op == StepOp::kBatchNorm || op == StepOp::kPad ||
         op == StepOp::kGather || op == StepOp::kLayerNorm;
}

void RunTensorOp(const PlanStep& step, const std::vector<const float*>& inputs, float* out,
                 int64_t out_elements, const TfRuntime* rt,
                 const std::vector<float*>& more_outputs) {
  const int64_t width = step.out_shape.empty() ? 1 : step.out_shape.back();
  if (step.op == StepOp::kStridedCopy) {
    const float* in = inputs[0];
    const int64_t s = LastStride(step.a_strides);
    ForEachRow(step, rt, [&](int64_t o, int64_t a, int64_t) {
      for (int64_t x = 0; x < width; ++x) out[o + x] = in[a + x * s];
    });
  } else if (step.op == StepOp::kBroadcast) {
    const int64_t sa = LastStride(step.a_strides), sb = LastStride(step.b_strides);
    const BinaryFunc f = step.binary;
    ForEachRow(step, rt, [&](int64_t o, int64_t a, int64_t b) {
      const float *pa = inputs[0] + a, *pb = inputs[1] + b;
      if (f == BinaryFunc::kAdd) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return x + y; });
      } else if (f == BinaryFunc::kSub) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return x - y; });
      } else if (f == BinaryFunc::kMul) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return x * y; });
      } else if (f == BinaryFunc::kMax) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return std::max(x, y); });
      } else if (f == BinaryFunc::kMin) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return std::min(x, y); });
      } else if (f == BinaryFunc::kMod) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return std::fmod(x, y); });
      } else if (f == BinaryFunc::kFloorMod) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) {
          const float r = std::fmod(x, y);
          return r != 0 && ((r < 0) != (y < 0)) ? r + y : r;
        });
      } else if (f == BinaryFunc::kPrelu) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return x < 0 ? x * y : x; });
      } else if (f == BinaryFunc::kDiv) {
        BinaryRow(pa, sa, pb, sb, out + o, width, [](float x, float y) { return x / y; });
      } else {
        BinaryRow(pa, sa, pb, sb, out + o, width,
                  // pow: squares (the layer norms') exactly and fast.
                  [](float x, float y) { return y == 2.0f ? x * x : std::pow(x, y); });
      }
    });
  } else if (step.op == StepOp::kConcat) {
    // in_shape: [outer, inner, each input's extent along the axis].
    const int64_t outer = step.in_shape[0], inner = step.in_shape[1];
    int64_t total = 0;
    for (size_t i = 2; i < step.in_shape.size(); ++i) total += step.in_shape[i];
    ParallelFor(rt, outer, out_elements, [&](int64_t o) {
      int64_t offset = 0;
      for (size_t i = 2; i < step.in_shape.size(); ++i) {
        const int64_t run = step.in_shape[i] * inner;
        std::memcpy(out + (o * total + offset) * inner, inputs[i - 2] + o * run,
                    sizeof(float) * run);
        offset += step.in_shape[i];
      }
    });
  } else if (step.op == StepOp::kBatchNorm) {
    // in_shape [N, C, inner]; inputs x, scale, B, mean, var; alpha: epsilon.
    const int64_t channels = step.in_shape[1], inner = step.in_shape[2];
    const float *x = inputs[0], *scale = inputs[1], *bias = inputs[2], *mean = inputs[3],
                *var = inputs[4];
    ParallelFor(rt, step.in_shape[0] * channels, step.in_shape[0] * channels * step.in_shape[2], [&](int64_t nc) {
      const int64_t c = nc % channels;
      const float s = scale[c] / std::sqrt(var[c] + step.alpha);
      const float t = bias[c] - mean[c] * s;
      for (int64_t i = nc * inner; i < (nc + 1) * inner; ++i) out[i] = x[i] * s + t;
    });
  } else if (step.op == StepOp::kReduce) {
    Reduce(step, inputs[0], out, rt);
  } else if (step.op == StepOp::kPad) {
    Pad(step, inputs[0], out, rt);
  } else if (step.op == StepOp::kLayerNorm) {
    const int64_t outer = step.in_shape[0], inner = step.in_shape[1];
    const float* scale = inputs.size() > 1 ? inputs[1] : nullptr;
    const float* bias = inputs.size() > 2 ? inputs[2] : nullptr;
    const int64_t rows_per_task = std::max<int64_t>(1, 8192 / std::max<int64_t>(inner, 1));
    float* mean = more_outputs.size() > 0 ? more_outputs[0] : nullptr;
    float* inv_std = more_outputs.size() > 1 ? more_outputs[1] : nullptr;
    ParallelFor(rt, (outer + rows_per_task - 1) / rows_per_task, outer * inner, [&](int64_t t) {
      for (int64_t o = t * rows_per_task; o < std::min(outer, (t + 1) * rows_per_task); ++o) {
        const std::pair<float, float> stats =
            LayerNormRow(inputs[0] + o * inner, scale, bias, out + o * inner, inner, step.alpha);
        if (mean != nullptr) mean[o] = stats.first;
        if (inv_std != nullptr) inv_std[o] = stats.second;
      }
    });
  } else if (step.op == StepOp::kGather) {
    const int64_t outer = step.in_shape[0], n = step.in_shape[1], inner = step.in_shape[2];
    const int64_t count = static_cast<int64_t>(step.indices.size());
    ParallelFor(rt, outer * count, outer * count * inner, [&](int64_t t) {
      const int64_t o = t / count, i = step.indices[t % count];
      std::memcpy(out + t * inner, inputs[0] + (o * n + i) * inner, sizeof(float) * inner);
    });
  }
}

}  // namespace tunefleet
