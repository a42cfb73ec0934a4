// The tensor operators of ops.h (RunTensorOp): strided copies, broadcasting
// arithmetic, reductions, concatenation, batch and layer norm, pad, gather.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "compiler/runtime/ops.h"
#include "compiler/runtime/vector_math.h"

namespace tunefleet {
namespace {

using namespace runtime_ops;  // NOLINT: the operators' shared helpers

// o[x] = f(a[x * sa], b[x * sb]) for x < n; the strides of a row (1) and
// of a broadcast value (0) as loops of their own, which vectorise.
template <BinaryFunc kFunc>
TF_VECTOR_CLONES void BinaryRow(const float* __restrict a, int64_t sa, const float* __restrict b,
                                int64_t sb, float* __restrict o, int64_t n) {
  if (sa == 1 && sb == 1) {
    for (int64_t x = 0; x < n; ++x) o[x] = Binary<kFunc>(a[x], b[x]);
  } else if (sa == 1 && sb == 0) {
    const float bv = b[0];
    for (int64_t x = 0; x < n; ++x) o[x] = Binary<kFunc>(a[x], bv);
  } else if (sa == 0 && sb == 1) {
    const float av = a[0];
    for (int64_t x = 0; x < n; ++x) o[x] = Binary<kFunc>(av, b[x]);
  } else {
    for (int64_t x = 0; x < n; ++x) o[x] = Binary<kFunc>(a[x * sa], b[x * sb]);
  }
}
using BinaryRowFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t);
template <BinaryFunc kFunc>
struct PickBinaryRow {
  static constexpr BinaryRowFn fn = &BinaryRow<kFunc>;
};

}  // namespace

namespace {

std::vector<int64_t> RowMajorStridesOf(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

// Lane indices for __builtin_shuffle on two Float8Lanes (0-7 the first
// operand's lanes, 8-15 the second's).
typedef int32_t Int8Lanes __attribute__((vector_size(8 * sizeof(int32_t))));

// to[k * to_stride + x] = from[x * from_stride + k] for an 8x8 tile, in
// registers: eight 8-float loads, three rounds of two-operand shuffles
// (the unpack, shufps and vperm2f128 of the classic AVX transpose, which
// GCC emits for these lane patterns) and eight 8-float stores.
TF_VECTOR_CLONES void Transpose8x8(const float* __restrict from, int64_t from_stride,
                                   float* __restrict to, int64_t to_stride) {
  Float8Lanes r[8], t[8], u[8];
  for (int x = 0; x < 8; ++x) r[x] = TF_LOAD8(from + x * from_stride);
  const Int8Lanes lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
  const Int8Lanes pair_lo = {0, 1, 8, 9, 4, 5, 12, 13}, pair_hi = {2, 3, 10, 11, 6, 7, 14, 15};
  const Int8Lanes half_lo = {0, 1, 2, 3, 8, 9, 10, 11}, half_hi = {4, 5, 6, 7, 12, 13, 14, 15};
  for (int i = 0; i < 8; i += 2) {
    t[i] = __builtin_shuffle(r[i], r[i + 1], lo);
    t[i + 1] = __builtin_shuffle(r[i], r[i + 1], hi);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = __builtin_shuffle(t[i], t[i + 2], pair_lo);
    u[i + 1] = __builtin_shuffle(t[i], t[i + 2], pair_hi);
    u[i + 2] = __builtin_shuffle(t[i + 1], t[i + 3], pair_lo);
    u[i + 3] = __builtin_shuffle(t[i + 1], t[i + 3], pair_hi);
  }
  for (int k = 0; k < 4; ++k) {
    *reinterpret_cast<Float8Unaligned*>(to + k * to_stride) =
        __builtin_shuffle(u[k], u[k + 4], half_lo);
    *reinterpret_cast<Float8Unaligned*>(to + (k + 4) * to_stride) =
        __builtin_shuffle(u[k], u[k + 4], half_hi);
  }
}

// A strided copy whose rows gather (the last output axis reads the input
// at a stride) while another output axis p reads it contiguously: a
// channels-last -> NCHW transpose (MaxViT's and Swin's windows back to an
// image, rows of 7 floats read C apart), attention's transposed keys (rows
// of the sequence read a head's width apart). Copied as [P x W] blocks,
// one per index of the other axes, in 8x8 tiles transposed in registers;
// a task is a block's group of 8 output rows over the whole width, so a
// single large transpose still spreads over the pool. Returns false
// (nothing copied) when the step is not such.
bool TransposeBlocks(const PlanStep& step, const float* in, float* out, const TfRuntime* rt) {
  const std::vector<int64_t>& shape = step.out_shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank < 2 || step.a_strides.size() != shape.size()) return false;
  const int64_t width = shape[rank - 1], s = step.a_strides[rank - 1];
  int64_t p = -1;
  for (int64_t d = rank - 2; d >= 0; --d) {
    if (step.a_strides[d] == 1 && shape[d] >= 8) p = d;
  }
  if (s == 1 || s == 0 || p < 0) return false;
  const std::vector<int64_t> out_strides = RowMajorStridesOf(shape);
  const int64_t rows = shape[p], row_stride = out_strides[p];
  const int64_t groups = (rows + 7) / 8;
  int64_t blocks = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) blocks *= d == p ? 1 : shape[d];
  ParallelFor(rt, blocks * groups, blocks * rows * width, [&](int64_t task) {
    int64_t a = step.a_offset, o = 0, rest = task / groups;
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (d == p) continue;
      const int64_t index = rest % shape[d];
      rest /= shape[d];
      a += index * step.a_strides[d];
      o += index * out_strides[d];
    }
    const int64_t r = (task % groups) * 8;
    if (r + 8 <= rows) {
      int64_t x = 0;
      for (; x + 8 <= width; x += 8) {
        Transpose8x8(in + a + r + x * s, s, out + o + r * row_stride + x, row_stride);
      }
      for (; x < width; ++x) {
        const float* from = in + a + r + x * s;
        float* to = out + o + r * row_stride + x;
        for (int64_t k = 0; k < 8; ++k) to[k * row_stride] = from[k];
      }
    } else {
      for (int64_t k = r; k < rows; ++k) {
        for (int64_t x = 0; x < width; ++x) out[o + k * row_stride + x] = in[a + k + x * s];
      }
    }
  });
  return true;
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

// One contiguous run of n values to one (inner == 1): 16 at a time in two
// vectors of 8 lanes (one scalar chain waited on each of its own adds),
// then the lanes and the tail.
template <ReduceFunc kFunc>
TF_VECTOR_CLONES float ReduceRun(const float* __restrict in, int64_t n) {
  constexpr float kStart = kFunc == ReduceFunc::kMax   ? -std::numeric_limits<float>::infinity()
                           : kFunc == ReduceFunc::kMin ? std::numeric_limits<float>::infinity()
                                                       : 0.0f;
  auto combine = [](float acc, float v) {
    return kFunc == ReduceFunc::kMax   ? std::max(acc, v)
           : kFunc == ReduceFunc::kMin ? std::min(acc, v)
                                       : acc + v;
  };
  Float8Lanes a0 = Float8Lanes{} + kStart, a1 = a0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const Float8Lanes v0 = TF_LOAD8(in + i), v1 = TF_LOAD8(in + i + 8);
    // Compare and select on the vectors: GCC does not vectorise std::max.
    if constexpr (kFunc == ReduceFunc::kMax) {
      a0 = a0 < v0 ? v0 : a0;
      a1 = a1 < v1 ? v1 : a1;
    } else if constexpr (kFunc == ReduceFunc::kMin) {
      a0 = v0 < a0 ? v0 : a0;
      a1 = v1 < a1 ? v1 : a1;
    } else {
      a0 += v0;
      a1 += v1;
    }
  }
  float acc = kStart;
  for (int l = 0; l < 8; ++l) acc = combine(combine(acc, a0[l]), a1[l]);
  for (; i < n; ++i) acc = combine(acc, in[i]);
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
// returns the mean and 1 / sqrt(var + eps). The sums in two vectors of 8
// lanes, folded once per row: a transformer's rows are short (Swin-T's 96
// floats), and 16 lanes summed one by one cost more than the row's vector
// work (runtime_ops_bench's layer_norm rows).
struct RowStats {
  float mean, inv_std;
};
TF_VECTOR_CLONES RowStats LayerNormRow(const float* __restrict x, const float* __restrict scale,
                                       const float* __restrict bias, float* __restrict out,
                                       int64_t n, float epsilon) {
  const int64_t whole = n / 16 * 16;
  Float8Lanes a0 = Float8Lanes{}, a1 = a0;
  for (int64_t i = 0; i < whole; i += 16) {
    a0 += TF_LOAD8(x + i);
    a1 += TF_LOAD8(x + i + 8);
  }
  // The lanes folded here, not in a lambda: it would be built for the
  // baseline, the vector passed through memory.
  Float8Lanes lanes = a0 + a1;
  float sum = 0;
  for (int l = 0; l < 8; ++l) sum += lanes[l];
  for (int64_t i = whole; i < n; ++i) sum += x[i];
  const float mean = sum / static_cast<float>(n);
  a0 = Float8Lanes{};
  a1 = a0;
  for (int64_t i = 0; i < whole; i += 16) {
    const Float8Lanes d0 = TF_LOAD8(x + i) - mean, d1 = TF_LOAD8(x + i + 8) - mean;
    a0 += d0 * d0;
    a1 += d1 * d1;
  }
  lanes = a0 + a1;
  float squares = 0;
  for (int l = 0; l < 8; ++l) squares += lanes[l];
  for (int64_t i = whole; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
  const float inv = 1.0f / std::sqrt(squares / static_cast<float>(n) + epsilon);
  if (scale != nullptr && bias != nullptr) {
    for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - mean) * inv * scale[i] + bias[i];
  } else {
    for (int64_t i = 0; i < n; ++i) {
      float v = (x[i] - mean) * inv;
      if (scale != nullptr) v *= scale[i];
      if (bias != nullptr) v += bias[i];
      out[i] = v;
    }
  }
  return {mean, inv};
}

// The input index an output coordinate reads along an axis of `dim`
// values `stride` apart (kConstant only; 1 for the others) with `before`
// padded in front, or -1 (kConstant outside or between).
int64_t PadSource(int64_t out_index, int64_t before, int64_t dim, PadMode mode,
                  int64_t stride = 1) {
  int64_t i = out_index - before;
  if (stride > 1) return i >= 0 && i % stride == 0 && i / stride < dim ? i / stride : -1;
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
      const int64_t source = PadSource(rest % out_dims[d], step.pads[d], in_dims[d], step.pad_mode,
                                       step.strides.empty() ? 1 : step.strides[d]);
      rest /= out_dims[d];
      if (source < 0) inside = false;
      at += source * in_strides[d];
    }
    if (!inside) {
      std::fill(dst, dst + width, fill);
      return;
    }
    const float* src = in + at;
    const int64_t stride = step.strides.empty() ? 1 : step.strides[rank - 1];
    for (int64_t x = 0; x < width; ++x) {
      const int64_t source = PadSource(x, before, in_width, step.pad_mode, stride);
      dst[x] = source < 0 ? fill : src[source];
    }
  });
}

// Resize (plan.h kResize). Resampling of the last two axes of images with
// two taps (nearest, linear) runs a row at a time: each output row blends
// two source rows with the row's weights, each column two columns. Any
// other case (cubic's four taps, other axes, a crop): each output element
// sums the taps of every axis that is not the identity.
void Resize(const PlanStep& step, const float* in, float* out, const TfRuntime* rt) {
  const std::vector<int64_t>& din = step.in_shape;
  const std::vector<int64_t>& dout = step.out_shape;
  const int64_t rank = static_cast<int64_t>(dout.size());
  std::vector<int64_t> first(rank + 1, 0);  // each axis' first position in the tables
  for (int64_t d = 0; d < rank; ++d) first[d + 1] = first[d] + dout[d];
  const int64_t taps =
      static_cast<int64_t>(step.indices.size()) / std::max<int64_t>(first[rank], 1);
  // Axes whose every position reads itself with weight 1, and whether a
  // crop leaves positions outside (indices -1).
  std::vector<int64_t> moved;
  bool outside = false;
  for (int64_t d = 0; d < rank; ++d) {
    bool identity = din[d] == dout[d];
    for (int64_t o = 0; o < dout[d]; ++o) {
      float own = 0;
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t t = (first[d] + o) * taps + k;
        outside |= step.indices[t] < 0;
        if (step.indices[t] == o) {
          own += step.weights[t];
        } else if (step.weights[t] != 0) {
          identity = false;
        }
      }
      identity &= own == 1.0f;
    }
    if (!identity) moved.push_back(d);
  }
  const std::vector<int64_t> in_strides = RowMajorStridesOf(din);
  int64_t total = 1;
  for (int64_t d : dout) total *= d;
  bool images = rank >= 2 && taps == 2 && !outside;
  for (int64_t d : moved) images &= d >= rank - 2;
  if (images) {
    const int64_t h = dout[rank - 2], w = dout[rank - 1], iw = din[rank - 1];
    const int64_t in_plane = din[rank - 2] * iw;
    const int64_t* ys = step.indices.data() + 2 * first[rank - 2];
    const int64_t* xs = step.indices.data() + 2 * first[rank - 1];
    const float* wy = step.weights.data() + 2 * first[rank - 2];
    const float* wx = step.weights.data() + 2 * first[rank - 1];
    ParallelFor(rt, total / std::max<int64_t>(w, 1), total, [&](int64_t row) {
      const int64_t plane = row / h, y = row % h;
      const float* r0 = in + plane * in_plane + ys[2 * y] * iw;
      const float* r1 = in + plane * in_plane + ys[2 * y + 1] * iw;
      const float b0 = wy[2 * y], b1 = wy[2 * y + 1];
      float* dst = out + row * w;
      for (int64_t x = 0; x < w; ++x) {
        const int64_t x0 = xs[2 * x], x1 = xs[2 * x + 1];
        const float a0 = wx[2 * x], a1 = wx[2 * x + 1];
        dst[x] = b0 * (a0 * r0[x0] + a1 * r0[x1]) + b1 * (a0 * r1[x0] + a1 * r1[x1]);
      }
    });
    return;
  }
  int64_t combos = 1;
  for (size_t k = 0; k < moved.size(); ++k) combos *= taps;
  ParallelFor(rt, total, total * combos, [&](int64_t i) {
    int64_t base = 0, rest = i;
    std::vector<int64_t> pos(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      pos[d] = rest % dout[d];
      rest /= dout[d];
      base += pos[d] * in_strides[d];  // identity axes read their own position
    }
    float value = 0;
    for (int64_t combo = 0; combo < combos; ++combo) {
      int64_t at = base, c = combo;
      float weight = 1;
      for (int64_t d : moved) {
        const int64_t t = (first[d] + pos[d]) * taps + c % taps;
        c /= taps;
        if (step.indices[t] < 0) {  // outside the crop
          out[i] = step.alpha;
          return;
        }
        weight *= step.weights[t];
        at += (step.indices[t] - pos[d]) * in_strides[d];
      }
      value += weight * in[at];
    }
    out[i] = value;
  });
}

}  // namespace

bool IsTensorOp(StepOp op) {
  return op == StepOp::kStridedCopy || op == StepOp::kBroadcast || op == StepOp::kReduce ||
         op == StepOp::kConcat || op == StepOp::kPad || op == StepOp::kGather ||
         op == StepOp::kLayerNorm || op == StepOp::kResize;
}

void RunTensorOp(const PlanStep& step, const std::vector<const float*>& inputs, float* out,
                 int64_t out_elements, const TfRuntime* rt,
                 const std::vector<float*>& more_outputs) {
  const int64_t width = step.out_shape.empty() ? 1 : step.out_shape.back();
  if (step.op == StepOp::kStridedCopy) {
    const float* in = inputs[0];
    const int64_t s = LastStride(step.a_strides);
    if (TransposeBlocks(step, in, out, rt)) return;
    ForEachRow(step, rt, [&](int64_t o, int64_t a, int64_t) {
      if (s == 1) {
        std::memcpy(out + o, in + a, width * sizeof(float));
      } else {
        for (int64_t x = 0; x < width; ++x) out[o + x] = in[a + x * s];
      }
    });
  } else if (step.op == StepOp::kBroadcast) {
    const int64_t sa = LastStride(step.a_strides), sb = LastStride(step.b_strides);
    const BinaryRowFn row = ForBinary<PickBinaryRow>(step.binary);
    ForEachRow(step, rt, [&](int64_t o, int64_t a, int64_t b) {
      row(inputs[0] + a, sa, inputs[1] + b, sb, out + o, width);
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
  } else if (step.op == StepOp::kResize) {
    Resize(step, inputs[0], out, rt);
  } else if (step.op == StepOp::kReduce) {
    Reduce(step, inputs[0], out, rt);
  } else if (step.op == StepOp::kPad) {
    Pad(step, inputs[0], out, rt);
  } else if (step.op == StepOp::kLayerNorm) {
    const int64_t outer = step.in_shape[0], inner = step.in_shape[1];
    // in_shape [rows, positions, C]: an instance norm, one scale and bias per
    // row (channel row % C), applied after.
    const int64_t per_row = step.in_shape.size() > 2 ? step.in_shape[2] : 0;
    const float* scale = inputs.size() > 1 && per_row == 0 ? inputs[1] : nullptr;
    const float* bias = inputs.size() > 2 && per_row == 0 ? inputs[2] : nullptr;
    const int64_t rows_per_task = std::max<int64_t>(1, 8192 / std::max<int64_t>(inner, 1));
    float* mean = more_outputs.size() > 0 ? more_outputs[0] : nullptr;
    float* inv_std = more_outputs.size() > 1 ? more_outputs[1] : nullptr;
    ParallelFor(rt, (outer + rows_per_task - 1) / rows_per_task, outer * inner, [&](int64_t t) {
      for (int64_t o = t * rows_per_task; o < std::min(outer, (t + 1) * rows_per_task); ++o) {
        const RowStats stats =
            LayerNormRow(inputs[0] + o * inner, scale, bias, out + o * inner, inner, step.alpha);
        if (mean != nullptr) mean[o] = stats.mean;
        if (inv_std != nullptr) inv_std[o] = stats.inv_std;
        if (per_row > 0) {
          const float s = inputs[1][o % per_row], b = inputs[2][o % per_row];
          for (float *v = out + o * inner, *end = v + inner; v < end; ++v) *v = *v * s + b;
        }
      }
    });
  } else if (step.op == StepOp::kGather) {
    const int64_t outer = step.in_shape[0], n = step.in_shape[1], inner = step.in_shape[2];
    // The step's own indices, or run-time ones (an embedding's token ids:
    // whole numbers in [-n, n), which the caller checked).
    const float* run_time = inputs.size() > 1 ? inputs[1] : nullptr;
    const int64_t count = run_time != nullptr ? out_elements / std::max<int64_t>(outer * inner, 1)
                                              : static_cast<int64_t>(step.indices.size());
    ParallelFor(rt, outer * count, outer * count * inner, [&](int64_t t) {
      int64_t i =
          run_time != nullptr ? static_cast<int64_t>(run_time[t % count]) : step.indices[t % count];
      if (i < 0) i += n;
      std::memcpy(out + t * inner, inputs[0] + (t / count * n + i) * inner, sizeof(float) * inner);
    });
  }
}

float ReduceContiguous(ReduceFunc func, const float* in, int64_t n) {
  switch (func) {
    case ReduceFunc::kMean:
      return ReduceRun<ReduceFunc::kMean>(in, n);
    case ReduceFunc::kSum:
      return ReduceRun<ReduceFunc::kSum>(in, n);
    case ReduceFunc::kMax:
      return ReduceRun<ReduceFunc::kMax>(in, n);
    case ReduceFunc::kMin:
      return ReduceRun<ReduceFunc::kMin>(in, n);
  }
  return 0.0f;
}

}  // namespace tunefleet
