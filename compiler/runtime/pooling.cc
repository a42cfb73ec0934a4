// The runtime's pooling (max, average, global average) in every layout it
// runs in: NCHW rows, and the blocked layout's blocks in vectors of 8
// lanes (of 4 where the block is not a multiple of 8).
#include <algorithm>
#include <cstring>
#include <limits>

#include "compiler/runtime/ops.h"
#include "compiler/runtime/vector_math.h"

namespace tunefleet {
namespace {

using namespace runtime_ops;  // NOLINT: ParallelFor, TF_VECTOR_CLONES, Float8Lanes

// The mean of each of a [h, in_w, b] block's b lanes over its h x w image,
// each row summed in float (four independent accumulators: one would make
// the loop wait on its own adds) and the rows summed in double, so a
// 112x112 image loses no precision. Lanes in parts of 8 as vectors, the
// rest of the block lane by lane; a block of one lane (NCHW) sums each row
// as the contiguous reduction does.
TF_VECTOR_CLONES void GlobalMeanBlock(const float* __restrict src, float* __restrict out, int64_t h,
                                      int64_t w, int64_t in_w, int64_t b) {
  const double count = static_cast<double>(h * w);
  if (b == 1) {
    double total = 0;
    for (int64_t y = 0; y < h; ++y) total += ReduceContiguous(ReduceFunc::kSum, src + y * in_w, w);
    out[0] = static_cast<float>(total / count);
    return;
  }
  const int64_t vector_lanes = b - b % 8;
  for (int64_t p = 0; p < vector_lanes; p += 8) {
    double total[8] = {};
    for (int64_t y = 0; y < h; ++y) {
      const float* __restrict row = src + y * in_w * b + p;
      Float8Lanes a0 = Float8Lanes{}, a1 = Float8Lanes{}, a2 = Float8Lanes{}, a3 = Float8Lanes{};
      int64_t x = 0;
      for (; x + 4 <= w; x += 4) {
        a0 += TF_LOAD8(row + x * b);
        a1 += TF_LOAD8(row + (x + 1) * b);
        a2 += TF_LOAD8(row + (x + 2) * b);
        a3 += TF_LOAD8(row + (x + 3) * b);
      }
      for (; x < w; ++x) a0 += TF_LOAD8(row + x * b);
      const Float8Lanes s = (a0 + a1) + (a2 + a3);
      for (int l = 0; l < 8; ++l) total[l] += s[l];
    }
    for (int l = 0; l < 8; ++l) out[p + l] = static_cast<float>(total[l] / count);
  }
  const int64_t lanes = b - vector_lanes;
  if (lanes == 0) return;
  double total[8] = {};
  float row_sum[8];
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t l = 0; l < lanes; ++l) row_sum[l] = 0;
    for (int64_t x = 0; x < w; ++x) {
      const float* v = src + (y * in_w + x) * b + vector_lanes;
      for (int64_t l = 0; l < lanes; ++l) row_sum[l] += v[l];
    }
    for (int64_t l = 0; l < lanes; ++l) total[l] += row_sum[l];
  }
  for (int64_t l = 0; l < lanes; ++l) out[vector_lanes + l] = static_cast<float>(total[l] / count);
}

// A pooling window over a [H, in_w, b] channel block.
struct PoolWindow {
  int64_t h, w, in_w, b, ow;
  int64_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool count_include_pad;

  // Taps of a window starting at y0 (x0) that fall inside the image, or
  // (count_include_pad) inside the padded image.
  int64_t RowTaps(int64_t y0, bool padded) const {
    return Taps(y0, kh, dh, padded ? -pt : 0, padded ? h + pb : h);
  }
  int64_t ColTaps(int64_t x0, bool padded) const {
    return Taps(x0, kw, dw, padded ? -pl : 0, padded ? w + pr : w);
  }
  static int64_t Taps(int64_t start, int64_t k, int64_t d, int64_t lo, int64_t hi) {
    int64_t n = 0;
    for (int64_t i = 0; i < k; ++i) n += start + i * d >= lo && start + i * d < hi;
    return n;
  }
};

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

// Vectors of kLanes floats (V) and the same read from any float address (U).
typedef float Float4Lanes __attribute__((vector_size(4 * sizeof(float))));
typedef float Float4Unaligned
    __attribute__((vector_size(4 * sizeof(float)), aligned(4), may_alias));
template <int kLanes>
struct LanesOf;
template <>
struct LanesOf<8> {
  using V = Float8Lanes;
  using U = Float8Unaligned;
};
template <>
struct LanesOf<4> {
  using V = Float4Lanes;
  using U = Float4Unaligned;
};

// PoolRow for a block whose lanes are a multiple of kLanes: 8 (AVX2's
// NCHW8c, AVX-512's NCHW16c, and the 24- or 32-lane blocks a model's
// channel counts pick) or 4 (the 12- and 20-lane blocks of 24 or 40
// channels: ShuffleNet's stem pool): the taps that fall inside the image
// are worked out per row and per column, not tested per tap, and each part
// of kLanes lanes is one vector register over the whole window.
template <bool kMax, int kLanes = 8>
TF_VECTOR_CLONES void PoolRowBlock(const PoolWindow& g, const float* __restrict src,
                                   float* __restrict dst, int64_t y) {
  using V = typename LanesOf<kLanes>::V;
  using U = typename LanesOf<kLanes>::U;
#define TF_LOAD_PART(p) (*reinterpret_cast<const U*>(p))
  const int64_t b = g.b, y0 = y * g.sh - g.pt;
  auto first_inside = [](int64_t start, int64_t d) {
    return start >= 0 ? 0 : (-start + d - 1) / d;
  };
  auto end_inside = [](int64_t start, int64_t d, int64_t k, int64_t n) {
    return start >= n ? 0 : std::min(k, (n - start + d - 1) / d);
  };
  const int64_t r_lo = first_inside(y0, g.dh), r_hi = end_inside(y0, g.dh, g.kh, g.h);
  const int64_t row_taps = g.count_include_pad ? g.RowTaps(y0, true) : r_hi - r_lo;
  const V init = V{} + (kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
  // Where four outputs in a row have their whole window inside the image
  // (no padding to skip), they are pooled together: four independent chains
  // of adds or maxima, where one output's taps alone wait on each other.
  // The same taps in the same order as one at a time: the same floats.
  constexpr int64_t kGroup = 4;
  const int64_t span = (g.kw - 1) * g.dw;
  const int64_t x_inside = g.pl > 0 ? (g.pl + g.sw - 1) / g.sw : 0;  // first x with x0 >= 0
  for (int64_t x = 0; x < g.ow; ++x) {
    const int64_t x0 = x * g.sw - g.pl;
    if (x >= x_inside && x + kGroup <= g.ow && x0 + (kGroup - 1) * g.sw + span < g.w) {
      float scale = 0.0f;
      if constexpr (!kMax) {
        const int64_t window = row_taps * g.kw;  // every column tap inside, padded or not
        scale = window > 0 ? 1.0f / static_cast<float>(window) : 0.0f;
      }
      // Named accumulators, not an array: GCC kept an array of vectors on
      // the stack.
      const int64_t next = g.sw * b;  // the next output's window
      for (int64_t p = 0; p < b; p += kLanes) {
        V a0 = init, a1 = init, a2 = init, a3 = init;
        for (int64_t r = r_lo; r < r_hi; ++r) {
          const float* __restrict row = src + ((y0 + r * g.dh) * g.in_w + x0) * b + p;
          for (int64_t s = 0; s < g.kw; ++s) {
            const float* __restrict v = row + s * g.dw * b;
            const V v0 = TF_LOAD_PART(v), v1 = TF_LOAD_PART(v + next);
            const V v2 = TF_LOAD_PART(v + 2 * next), v3 = TF_LOAD_PART(v + 3 * next);
            if constexpr (kMax) {
              a0 = a0 < v0 ? v0 : a0;
              a1 = a1 < v1 ? v1 : a1;
              a2 = a2 < v2 ? v2 : a2;
              a3 = a3 < v3 ? v3 : a3;
            } else {
              a0 += v0;
              a1 += v1;
              a2 += v2;
              a3 += v3;
            }
          }
        }
        if constexpr (!kMax) {
          a0 *= scale;
          a1 *= scale;
          a2 *= scale;
          a3 *= scale;
        }
        float* __restrict o = dst + x * b + p;
        std::memcpy(o, &a0, sizeof(a0));
        std::memcpy(o + b, &a1, sizeof(a1));
        std::memcpy(o + 2 * b, &a2, sizeof(a2));
        std::memcpy(o + 3 * b, &a3, sizeof(a3));
      }
      x += kGroup - 1;
      continue;
    }
    const int64_t s_lo = first_inside(x0, g.dw), s_hi = end_inside(x0, g.dw, g.kw, g.w);
    float scale = 0.0f;  // an average's 1 / taps counted
    if constexpr (!kMax) {
      const int64_t window = row_taps * (g.count_include_pad ? g.ColTaps(x0, true)
                                                             : std::max<int64_t>(s_hi - s_lo, 0));
      scale = window > 0 ? 1.0f / static_cast<float>(window) : 0.0f;
    }
    for (int64_t p = 0; p < b; p += kLanes) {
      // A max as a compare and select on the vector: GCC does not vectorise
      // a float max written lane by lane (std::max is the same per lane).
      V acc = init;
      for (int64_t r = r_lo; r < r_hi; ++r) {
        const float* __restrict row = src + ((y0 + r * g.dh) * g.in_w + x0) * b + p;
        for (int64_t s = s_lo; s < s_hi; ++s) {
          const V v = TF_LOAD_PART(row + s * g.dw * b);
          if constexpr (kMax) {
            acc = acc < v ? v : acc;
          } else {
            acc += v;
          }
        }
      }
      if constexpr (!kMax) acc *= scale;
      std::memcpy(dst + x * b + p, &acc, sizeof(acc));
    }
  }
}
#undef TF_LOAD_PART

// The same for NCHW (one lane): the columns whose whole window lies inside
// the row (stride 1) pooled 8 at a time, one vector per tap (a last group
// that would pass the end is moved back to end there: it recomputes the same
// values); the others, and any stride, tap by tap.
template <bool kMax>
TF_VECTOR_CLONES void PoolRowPlain(const PoolWindow& g, const float* __restrict src,
                                   float* __restrict dst, int64_t y) {
  using V = Float8Lanes;
  using U = Float8Unaligned;
  constexpr int64_t kLanes = 8;
  const int64_t y0 = y * g.sh - g.pt;
  const int64_t r_lo = y0 >= 0 ? 0 : (-y0 + g.dh - 1) / g.dh;
  const int64_t r_hi = y0 >= g.h ? 0 : std::min(g.kh, (g.h - y0 + g.dh - 1) / g.dh);
  const int64_t row_taps = g.count_include_pad ? g.RowTaps(y0, true) : r_hi - r_lo;
  const float init = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  auto one = [&](int64_t x) {
    const int64_t x0 = x * g.sw - g.pl;
    const int64_t s_lo = x0 >= 0 ? 0 : (-x0 + g.dw - 1) / g.dw;
    const int64_t s_hi = x0 >= g.w ? 0 : std::min(g.kw, (g.w - x0 + g.dw - 1) / g.dw);
    float acc = init;
    for (int64_t r = r_lo; r < r_hi; ++r) {
      const float* __restrict row = src + (y0 + r * g.dh) * g.in_w + x0;
      for (int64_t s = s_lo; s < s_hi; ++s) {
        const float v = row[s * g.dw];
        acc = kMax ? (acc < v ? v : acc) : acc + v;
      }
    }
    if (!kMax) {
      const int64_t window = row_taps * (g.count_include_pad ? g.ColTaps(x0, true)
                                                             : std::max<int64_t>(s_hi - s_lo, 0));
      acc = window > 0 ? acc / static_cast<float>(window) : 0.0f;
    }
    dst[x] = acc;
  };
  // Columns [x_lo, x_hi) have every tap inside the row.
  const int64_t span = (g.kw - 1) * g.dw;
  const int64_t x_lo = std::min(g.ow, (g.pl + g.sw - 1) / g.sw);
  const int64_t last = g.w - 1 - span + g.pl;  // the last x0 + pl whose window fits
  const int64_t x_hi = std::max(x_lo, last >= 0 ? std::min(g.ow, last / g.sw + 1) : 0);
  for (int64_t x = 0; x < x_lo; ++x) one(x);
  for (int64_t x = x_hi; x < g.ow; ++x) one(x);
  if (g.sw != 1 || x_hi - x_lo < kLanes || r_hi <= r_lo) {
    for (int64_t x = x_lo; x < x_hi; ++x) one(x);
    return;
  }
  float scale = 0.0f;
  if constexpr (!kMax) {
    const int64_t window = row_taps * g.kw;  // every column tap inside, padded or not
    scale = window > 0 ? 1.0f / static_cast<float>(window) : 0.0f;
  }
  for (int64_t next = x_lo; next < x_hi; next += kLanes) {
    const int64_t x = std::min(next, x_hi - kLanes);
    V acc = V{} + init;
    for (int64_t r = r_lo; r < r_hi; ++r) {
      const float* __restrict row = src + (y0 + r * g.dh) * g.in_w + x - g.pl;
      for (int64_t s = 0; s < g.kw; ++s) {
        const V v = *reinterpret_cast<const U*>(row + s * g.dw);
        if constexpr (kMax) {
          acc = acc < v ? v : acc;
        } else {
          acc += v;
        }
      }
    }
    if constexpr (!kMax) acc *= scale;
    std::memcpy(dst + x, &acc, sizeof(acc));
  }
}

}  // namespace

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
      GlobalMeanBlock(in + nb * h * in_w * b, out + nb * b, h, w, in_w, b);
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
  const auto row = b == 1       ? (max ? &PoolRowPlain<true> : &PoolRowPlain<false>)
                   : b % 8 == 0 ? (max ? &PoolRowBlock<true> : &PoolRowBlock<false>)
                   : b % 4 == 0 ? (max ? &PoolRowBlock<true, 4> : &PoolRowBlock<false, 4>)
                                : (max ? &PoolRow<true> : &PoolRow<false>);
  // One output row (n, channel block, y) per task.
  ParallelFor(rt, n * blocks * oh, n * c * oh * ow * k[0] * k[1], [&](int64_t t) {
    row(window, in + (t / oh) * h * in_w * b, out + t * out_w * b, t % oh);
  });
}

}  // namespace tunefleet
