#include "compiler/runtime/ops.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "compiler/runtime/exp_activations.h"
#include "compiler/runtime/vector_math.h"

namespace tunefleet {
namespace {

using namespace runtime_ops;  // NOLINT: the operators' shared helpers

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

// The exp activations run in exp_activations.h's explicit vector code where
// the CPU has it.
template <PointwiseFunc kFunc>
TF_VECTOR_CLONES void PointwiseRun(const float* __restrict in, float* __restrict out, int64_t n,
                                   float alpha, float beta) {
  if constexpr (IsExpActivation(kFunc)) {
    if (ExpActivationRun(kFunc, in, out, n)) return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = Pointwise<kFunc>(in[i], alpha, beta);
}
// In place (`in` and `out` the same buffer: no __restrict).
template <PointwiseFunc kFunc>
TF_VECTOR_CLONES void PointwiseInPlace(float* v, int64_t n, float alpha, float beta) {
  if constexpr (IsExpActivation(kFunc)) {
    if (ExpActivationRun(kFunc, v, v, n)) return;
  }
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

// A channel block's `block` per-lane values repeated to a period of at
// least kLanePeriod floats (a whole number of blocks), so a row of
// positions x lanes runs as one flat loop over pieces of that period: an
// inner loop of `block` iterations (6, 10, 29, ...) per position costs its
// setup every few floats and ran 3-5x slower than a flat loop in cache.
struct LanePattern {
  static constexpr int64_t kLanePeriod = 128;
  float repeated[2 * kLanePeriod];
  const float* values;
  int64_t period;

  LanePattern(const float* lanes, int64_t block) {
    if (block >= kLanePeriod) {  // already long enough
      values = lanes;
      period = block;
      return;
    }
    // Doubled until it spans kLanePeriod: a few copies, not one per block.
    std::copy(lanes, lanes + block, repeated);
    period = block;
    for (; period < kLanePeriod; period *= 2) {
      std::copy(repeated, repeated + period, repeated + period);
    }
    values = repeated;
  }
};

// One (outer, channel block) row of an epilogue: `inner` positions of
// `block` lanes, then kFunc with alpha lo and beta hi when it is one of the
// cheap activations (none, relu, clip, hard swish; BindEpilogue runs any
// other after the row, over it while it is still in cache). The cases are
// separate instantiations so each inner loop is branch-free.
template <PointwiseFunc kFunc, bool kBias, bool kResidual>
TF_VECTOR_CLONES void EpilogueRow(float* __restrict out, const float* __restrict bias,
                                  const float* __restrict residual, int64_t inner, int64_t block,
                                  float lo, float hi) {
  auto one = [&](float x, float b, float r) {
    if constexpr (kBias) x += b;
    if constexpr (kResidual) x += r;
    return Pointwise<kFunc>(x, lo, hi);
  };
  const int64_t n = inner * block;
  if (!kBias || block == 1) {  // one bias for the whole row (NCHW), or none
    const float b = kBias ? bias[0] : 0.0f;
    for (int64_t i = 0; i < n; ++i) out[i] = one(out[i], b, kResidual ? residual[i] : 0.0f);
    return;
  }
  // The blocks of one or two AVX-512 / AVX2 vectors at a width known here:
  // no pattern to build (a kernel's hook calls this on regions of a few
  // hundred floats).
  auto fixed = [&](auto width) {
    constexpr int64_t kBlock = decltype(width)::value;
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t l = 0; l < kBlock; ++l) {
        const int64_t at = i * kBlock + l;
        out[at] = one(out[at], bias[l], kResidual ? residual[at] : 0.0f);
      }
    }
  };
  if (block == 8) return fixed(std::integral_constant<int64_t, 8>{});
  if (block == 16) return fixed(std::integral_constant<int64_t, 16>{});
  const LanePattern lanes(bias, block);
  for (int64_t j = 0; j < n; j += lanes.period) {
    const int64_t len = std::min(lanes.period, n - j);
    float* __restrict v = out + j;
    const float* __restrict r = kResidual ? residual + j : nullptr;
    const float* __restrict b = lanes.values;
    for (int64_t q = 0; q < len; ++q) v[q] = one(v[q], b[q], kResidual ? r[q] : 0.0f);
  }
}

using EpilogueRowFn = BoundEpilogue::RowFn;

template <PointwiseFunc kFunc>
EpilogueRowFn EpilogueRowFor(bool bias, bool residual) {
  if (bias) return residual ? &EpilogueRow<kFunc, true, true> : &EpilogueRow<kFunc, true, false>;
  return residual ? &EpilogueRow<kFunc, false, true> : &EpilogueRow<kFunc, false, false>;
}

TF_VECTOR_CLONES void AddRun(const float* __restrict a, const float* __restrict b,
                             float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

// One row of `width` positions of `block` lanes, each lane with its own b.
template <BinaryFunc kFunc>
TF_VECTOR_CLONES void ChannelRow(const float* __restrict a, const float* __restrict b,
                                 float* __restrict out, int64_t width, int64_t block) {
  if (block == 1) {  // NCHW: one value for the whole row
    const float s = b[0];
    for (int64_t x = 0; x < width; ++x) out[x] = Binary<kFunc>(a[x], s);
    return;
  }
  const LanePattern lanes(b, block);
  const int64_t n = width * block;
  for (int64_t j = 0; j < n; j += lanes.period) {
    const int64_t len = std::min(lanes.period, n - j);
    const float* __restrict in = a + j;
    const float* __restrict s = lanes.values;
    float* __restrict o = out + j;
    for (int64_t q = 0; q < len; ++q) o[q] = Binary<kFunc>(in[q], s[q]);
  }
}

// One row of x * s + t (per lane of `block`; one s and t when block is 1),
// then kAct 0 none, 1 relu, 2 clip to [lo, hi].
template <int kAct>
TF_VECTOR_CLONES void AffineRow(const float* __restrict a, const float* __restrict s,
                                const float* __restrict t, float* __restrict out, int64_t width,
                                int64_t block, float lo, float hi) {
  auto act = [&](float v) {
    if constexpr (kAct == 1) v = v > 0 ? v : 0;
    if constexpr (kAct == 2) v = std::min(std::max(v, lo), hi);
    return v;
  };
  if (block == 1) {
    const float s0 = s[0], t0 = t[0];
    for (int64_t x = 0; x < width; ++x) out[x] = act(a[x] * s0 + t0);
    return;
  }
  const LanePattern scales(s, block), shifts(t, block);
  const int64_t n = width * block;
  for (int64_t j = 0; j < n; j += scales.period) {
    const int64_t len = std::min(scales.period, n - j);
    const float* __restrict in = a + j;
    const float* __restrict sp = scales.values;
    const float* __restrict tp = shifts.values;
    float* __restrict o = out + j;
    for (int64_t q = 0; q < len; ++q) o[q] = act(in[q] * sp[q] + tp[q]);
  }
}

using ChannelRowFn = void (*)(const float*, const float*, float*, int64_t, int64_t);
template <BinaryFunc kFunc>
struct PickChannelRow {
  static constexpr ChannelRowFn fn = &ChannelRow<kFunc>;
};

TF_VECTOR_CLONES void SubtractFrom(const float* __restrict in, float value, float* __restrict out,
                                   int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] - value;
}
TF_VECTOR_CLONES void ScaleRun(float* v, float scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] *= scale;
}
TF_VECTOR_CLONES void ScaleRun(const float* __restrict in, float scale, float* __restrict out,
                               int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale;
}

// Softmax of one contiguous row of n values where exp_activations has no
// code for the CPU: its maximum, the exponentials of the differences, their
// sum, the scale.
void SoftmaxRow(const float* __restrict in, float* __restrict out, int64_t n) {
  SubtractFrom(in, ReduceContiguous(ReduceFunc::kMax, in, n), out, n);
  PointwiseInPlace<PointwiseFunc::kExp>(out, n, 0.0f, 0.0f);
  ScaleRun(out, 1.0f / ReduceContiguous(ReduceFunc::kSum, out, n), n);
}

// The same in place (a fused bias already added into `v`).
void SoftmaxRowInPlace(float* v, int64_t n) {
  const float max = ReduceContiguous(ReduceFunc::kMax, v, n);
  for (int64_t i = 0; i < n; ++i) v[i] -= max;
  PointwiseInPlace<PointwiseFunc::kExp>(v, n, 0.0f, 0.0f);
  ScaleRun(v, 1.0f / ReduceContiguous(ReduceFunc::kSum, v, n), n);
}

// One row of the last-axis softmax with a bias added first: out = softmax(
// in + bias[.. b_strides]), the row's bias from `b` on at stride `sb`.
TF_VECTOR_CLONES void AddBiasRow(const float* __restrict in, const float* __restrict b, int64_t sb,
                                 float* __restrict out, int64_t n) {
  if (sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] + b[i];
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] + b[i * sb];
  }
}

// Softmax over the middle axis of one [axis, inner] slice, `width` columns
// of inner from `first` at a time: every loop runs along the contiguous
// inner dimension.
TF_VECTOR_CLONES void SoftmaxColumns(const float* __restrict in, float* __restrict out,
                                     int64_t axis, int64_t inner, int64_t first, int64_t width,
                                     float* __restrict max, double* __restrict sum) {
  std::fill(max, max + width, -std::numeric_limits<float>::infinity());
  std::fill(sum, sum + width, 0.0);
  for (int64_t a = 0; a < axis; ++a) {
    const float* row = in + a * inner + first;
    for (int64_t i = 0; i < width; ++i) max[i] = std::max(max[i], row[i]);
  }
  for (int64_t a = 0; a < axis; ++a) {
    const float* src = in + a * inner + first;
    float* row = out + a * inner + first;
    for (int64_t i = 0; i < width; ++i) row[i] = src[i] - max[i];
    PointwiseInPlace<PointwiseFunc::kExp>(row, width, 0.0f, 0.0f);
    for (int64_t i = 0; i < width; ++i) sum[i] += row[i];
  }
  for (int64_t i = 0; i < width; ++i) max[i] = static_cast<float>(1.0 / sum[i]);  // the scales
  for (int64_t a = 0; a < axis; ++a) {
    float* row = out + a * inner + first;
    for (int64_t i = 0; i < width; ++i) row[i] *= max[i];
  }
}

}  // namespace

static_assert(std::is_standard_layout_v<BoundEpilogue> && offsetof(BoundEpilogue, hook) == 0,
              "a kernel's TfEpilogue* must be its BoundEpilogue's address");

// Floats of one piece of an epilogue's row (ApplyEpilogue).
constexpr int64_t kEpiloguePieceFloats = 4096;

// TfEpilogue::apply: each of the region's rows.
static void ApplyRegion(const TfEpilogue* self, int64_t offset, int64_t rows, int64_t cols,
                        int64_t row_stride) {
  const auto* bound = reinterpret_cast<const BoundEpilogue*>(self);
  for (int64_t r = 0; r < rows; ++r) bound->Apply(offset + r * row_stride, cols);
}

BoundEpilogue BindEpilogue(const PlanEpilogue& e, const float* bias, const float* residual,
                           float* y, int64_t elements) {
  BoundEpilogue b;
  b.hook.apply = &ApplyRegion;
  b.epilogue = e;
  b.bias = bias;
  b.residual = residual;
  b.y = y;
  b.elements = elements;
  b.dense = e.block == 1 && e.inner == 1;
  b.run = b.dense ? e.channels : e.inner * e.block;
  b.blocks = e.channels / e.block;
  b.by_run = FastDivisor(b.run);
  b.by_blocks = FastDivisor(std::max<int64_t>(b.blocks, 1));
  b.by_block = FastDivisor(std::max<int64_t>(e.block, 1));
  const PointwiseFunc func = e.activation.func;
  // The cheap activations run in the row's loop; the others after it.
  const bool in_row = func == PointwiseFunc::kNone || func == PointwiseFunc::kRelu ||
                      func == PointwiseFunc::kClip || func == PointwiseFunc::kHardSwish;
  if (bias != nullptr || residual != nullptr || (in_row && func != PointwiseFunc::kNone)) {
    switch (in_row ? func : PointwiseFunc::kNone) {
      case PointwiseFunc::kRelu:
        b.row = EpilogueRowFor<PointwiseFunc::kRelu>(bias, residual);
        break;
      case PointwiseFunc::kClip:
        b.row = EpilogueRowFor<PointwiseFunc::kClip>(bias, residual);
        break;
      case PointwiseFunc::kHardSwish:
        b.row = EpilogueRowFor<PointwiseFunc::kHardSwish>(bias, residual);
        break;
      default:
        b.row = EpilogueRowFor<PointwiseFunc::kNone>(bias, residual);
        break;
    }
  }
  if (!in_row) b.after = ForFunc<PickInPlace>(func);
  b.fused = FusedEpilogue(func,
                          bias == nullptr
                              ? EpilogueBias::kNone
                              : (b.dense ? EpilogueBias::kPerPosition : EpilogueBias::kPeriodic),
                          residual != nullptr, e.block);
  return b;
}

void BoundEpilogue::Apply(int64_t offset, int64_t count) const {
  if (offset < 0 || count <= 0 || offset > elements - count) return;
  const PlanEpilogue& e = epilogue;
  const float alpha = e.activation.alpha, beta = e.activation.beta;
  // No divisions (FastDivisor): a kernel's hook calls this on regions of a
  // few hundred floats, where four took a fifth of the time.
  int64_t run_index = by_run.Quotient(offset), within = offset - run_index * run;
  while (count > 0) {
    const int64_t len = std::min(count, run - within);
    float* out = y + offset;
    const float* res = residual != nullptr ? residual + offset : nullptr;
    // One pass where the vector code has this epilogue and the piece starts
    // at a channel block's first lane (or needs no bias pattern).
    const bool one_pass =
        fused != nullptr && (bias == nullptr || dense || by_block.Remainder(within) == 0);
    if (one_pass) {
      const float* b = bias == nullptr ? nullptr
                       : dense         ? bias + within
                                       : bias + by_blocks.Remainder(run_index) * e.block;
      fused(out, out, b, e.block, res, len, alpha, beta);
    } else if (row != nullptr && dense) {
      row(out, bias != nullptr ? bias + within : nullptr, res, 1, len, alpha, beta);
    } else if (row != nullptr) {
      const int64_t first_channel = by_blocks.Remainder(run_index) * e.block;
      if (by_block.Remainder(within) == 0 && by_block.Remainder(len) == 0) {
        row(out, bias != nullptr ? bias + first_channel : nullptr, res, len / e.block, e.block,
            alpha, beta);
      } else {  // a run that splits a channel block: value by value
        for (int64_t i = 0; i < len; ++i) {
          const int64_t c = first_channel + by_block.Remainder(within + i);
          row(out + i, bias != nullptr ? bias + c : nullptr, res != nullptr ? res + i : nullptr, 1,
              1, alpha, beta);
        }
      }
    }
    if (after != nullptr && !one_pass) after(out, len, alpha, beta);
    offset += len;
    count -= len;
    ++run_index;
    within = 0;
  }
}

void ApplyEpilogue(const PlanEpilogue& e, const float* bias, const float* residual, float* y,
                   int64_t elements, const TfRuntime* rt) {
  const BoundEpilogue bound = BindEpilogue(e, bias, residual, y, elements);
  // Runs split into pieces of about 16 KiB: the add and the activation
  // after it then meet the piece in L1, one pass over memory, not two.
  const bool dense = bound.dense;
  const int64_t run = bound.run;
  const int64_t piece =
      dense ? run : std::max<int64_t>(1, kEpiloguePieceFloats / e.block) * e.block;
  const int64_t pieces = (run + piece - 1) / piece, runs = elements / run;
  ParallelFor(rt, runs * pieces, elements, [&](int64_t t) {
    const int64_t begin = (t % pieces) * piece;
    bound.Apply((t / pieces) * run + begin, std::min(piece, run - begin));
  });
}

void Elementwise(const PlanStep& step, const float* a, const float* b, float* out, int64_t elements,
                 const TfRuntime* rt) {
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
  const ChannelRowFn fn = ForBinary<PickChannelRow>(step.binary);
  // Tasks of several rows of one (image, channel block) plane, which share
  // b's lanes: at least 16 tasks for the pool, each as long as that allows.
  const int64_t planes = n * blocks;
  const int64_t rows_per_task = std::clamp<int64_t>(planes * h / 16, 1, h);
  const int64_t tasks_per_plane = (h + rows_per_task - 1) / rows_per_task;
  ParallelFor(rt, planes * tasks_per_plane, n * c * h * layout.RowWidth(), [&](int64_t t) {
    const int64_t plane = t / tasks_per_plane, first = (t % tasks_per_plane) * rows_per_task;
    const int64_t rows = std::min(rows_per_task, h - first);
    const int64_t image = plane / blocks, cb = plane % blocks;
    const int64_t offset = (plane * h + first) * row;
    fn(a + offset, b + image * b_image + cb * block, out + offset, rows * row / block, block);
  });
}

void ScaleWeights(const PlanStep& step, const float* w, const float* s, float* out,
                  const TfRuntime* rt) {
  const int64_t occ = step.in_shape[0], icc = step.in_shape[1], taps = step.in_shape[2];
  const int64_t ib = step.in_shape[3], ob = step.in_shape[4];
  // A task per (output block, input block): taps x ib rows of ob weights,
  // each row one channel's.
  ParallelFor(rt, occ * icc, occ * icc * taps * ib * ob, [&](int64_t t) {
    const float* scales = s + (t % icc) * ib;
    const int64_t first = t * taps * ib * ob;
    for (int64_t tap = 0; tap < taps; ++tap) {
      for (int64_t i = 0; i < ib; ++i) {
        const int64_t at = first + (tap * ib + i) * ob;
        ScaleRun(w + at, scales[i], out + at, ob);
      }
    }
  });
}

void BatchNorm(const PlanStep& step, const PlanBuffer& layout,
               const std::vector<const float*>& inputs, float* out, const TfRuntime* rt) {
  const int64_t c = step.in_shape[1];
  const float *scale = inputs[1], *bias = inputs[2], *mean = inputs[3], *var = inputs[4];
  std::vector<float> s(c), t(c);
  for (int64_t i = 0; i < c; ++i) {
    s[i] = scale[i] / std::sqrt(var[i] + step.alpha);
    t[i] = bias[i] - mean[i] * s[i];
  }
  // Rows of `width` positions of `block` lanes: (n, channel block, y) of a
  // blocked (or padded) 4-D layout, or (n, c) of a plain [N, C, inner].
  const bool blocked = !layout.is_plain();
  const int64_t block = blocked ? layout.block : 1;
  const int64_t h = blocked ? layout.shape[2] : 1;
  const int64_t width = blocked ? layout.RowWidth() : step.in_shape[2];
  const int64_t rows = step.in_shape[0] * (c / block) * h;
  const PointwiseFunc func = step.activation.func;
  const float lo = step.activation.alpha, hi = step.activation.beta;
  using AffineRowFn =
      void (*)(const float*, const float*, const float*, float*, int64_t, int64_t, float, float);
  const AffineRowFn row_fn = func == PointwiseFunc::kRelu   ? &AffineRow<1>
                             : func == PointwiseFunc::kClip ? &AffineRow<2>
                                                            : &AffineRow<0>;
  const PointwiseInPlaceFn after =
      func == PointwiseFunc::kRelu || func == PointwiseFunc::kClip || func == PointwiseFunc::kNone
          ? nullptr
          : ForFunc<PickInPlace>(func);
  ParallelFor(rt, rows, rows * width * block, [&](int64_t r) {
    const int64_t channel = ((r / h) % (c / block)) * block;
    float* row_out = out + r * width * block;
    row_fn(inputs[0] + r * width * block, s.data() + channel, t.data() + channel, row_out, width,
           block, lo, hi);
    if (after != nullptr) after(row_out, width * block, lo, hi);
  });
}

void Softmax(const PlanStep& step, const float* in, const float* bias, float* out,
             const TfRuntime* rt) {
  const int64_t outer = step.in_shape[0], axis = step.in_shape[1], inner = step.in_shape[2];
  if (bias != nullptr) {
    // Attention's scores plus their bias or mask (inner is 1): each row of
    // out_shape gets the sum into `out`, then its softmax there, in cache.
    const int64_t sb = LastStride(step.b_strides);
    ForEachRow(step, rt, [&](int64_t o, int64_t, int64_t b) {
      AddBiasRow(in + o, bias + b, sb, out + o, axis);
      if (!SoftmaxRowsRun(out + o, out + o, 1, axis)) SoftmaxRowInPlace(out + o, axis);
    });
    return;
  }
  if (inner == 1) {
    // The last axis (attention's scores): one contiguous row per task.
    const int64_t rows_per_task = std::max<int64_t>(1, 4096 / std::max<int64_t>(axis, 1));
    ParallelFor(rt, (outer + rows_per_task - 1) / rows_per_task, outer * axis, [&](int64_t t) {
      const int64_t first = t * rows_per_task, end = std::min(outer, first + rows_per_task);
      if (SoftmaxRowsRun(in + first * axis, out + first * axis, end - first, axis)) return;
      for (int64_t o = first; o < end; ++o) SoftmaxRow(in + o * axis, out + o * axis, axis);
    });
    return;
  }
  // The middle axis: columns of inner in pieces of kColumns per task.
  constexpr int64_t kColumns = 256;
  const int64_t pieces = (inner + kColumns - 1) / kColumns;
  ParallelFor(rt, outer * pieces, outer * axis * inner, [&](int64_t t) {
    const int64_t o = t / pieces, first = (t % pieces) * kColumns;
    float max[kColumns];
    double sum[kColumns];
    SoftmaxColumns(in + o * axis * inner, out + o * axis * inner, axis, inner, first,
                   std::min(kColumns, inner - first), max, sum);
  });
}

}  // namespace tunefleet
