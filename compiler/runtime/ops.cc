#include "compiler/runtime/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tunefleet {
namespace {

// Runs fn(i) for i in [0, n) on the runtime's pool.
template <typename Fn>
void ParallelFor(const TfRuntime* rt, int64_t n, Fn fn) {
  auto body = [](int64_t i, void* closure) { (*static_cast<Fn*>(closure))(i); };
  rt->parallel_for(rt->context, n, body, &fn);
}

}  // namespace

void ApplyEpilogue(const PlanEpilogue& e, const float* bias, const float* residual, float* y,
                   int64_t elements, const TfRuntime* rt) {
  const int64_t rows = elements / e.inner;  // (outer, channel) pairs
  const int act = e.activation == "relu" ? 1 : e.activation == "clip" ? 2 : 0;
  ParallelFor(rt, rows, [&](int64_t row) {
    const float b = bias ? bias[row % e.channels] : 0.0f;
    float* out = y + row * e.inner;
    const float* res = residual ? residual + row * e.inner : nullptr;
    for (int64_t i = 0; i < e.inner; ++i) {
      float v = out[i] + b;
      if (res) v += res[i];
      if (act == 1) v = v > 0 ? v : 0;
      if (act == 2) v = std::min(std::max(v, e.clip_min), e.clip_max);
      out[i] = v;
    }
  });
}

void Pool(const PlanStep& step, const float* in, float* out, const TfRuntime* rt) {
  const int64_t n = step.in_shape[0], c = step.in_shape[1], h = step.in_shape[2],
                w = step.in_shape[3];
  const int64_t oh = step.out_shape[2], ow = step.out_shape[3];
  if (step.op == "global_avg_pool") {
    ParallelFor(rt, n * c, [&](int64_t nc) {
      const float* src = in + nc * h * w;
      double sum = 0;
      for (int64_t i = 0; i < h * w; ++i) sum += src[i];
      out[nc] = static_cast<float>(sum / static_cast<double>(h * w));
    });
    return;
  }
  const bool is_max = step.op == "max_pool";
  const int64_t kh = step.kernel_shape[0], kw = step.kernel_shape[1];
  const int64_t sh = step.strides[0], sw = step.strides[1];
  const int64_t pt = step.pads[0], pl = step.pads[1], pb = step.pads[2], pr = step.pads[3];
  ParallelFor(rt, n * c, [&](int64_t nc) {
    const float* src = in + nc * h * w;
    float* dst = out + nc * oh * ow;
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        const int64_t y0 = y * sh - pt, x0 = x * sw - pl;
        float best = -std::numeric_limits<float>::infinity();
        double sum = 0;
        int64_t count = 0;
        for (int64_t r = 0; r < kh; ++r) {
          const int64_t iy = y0 + r;
          if (iy < 0 || iy >= h) continue;
          for (int64_t s = 0; s < kw; ++s) {
            const int64_t ix = x0 + s;
            if (ix < 0 || ix >= w) continue;
            const float v = src[iy * w + ix];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        }
        if (is_max) {
          dst[y * ow + x] = best;
        } else {
          // ONNX counts the padded window (clipped to the padded input) when
          // count_include_pad, else only the taps inside the image.
          int64_t window = count;
          if (step.count_include_pad) {
            const int64_t ye = std::min(y0 + kh, h + pb), xe = std::min(x0 + kw, w + pr);
            window = (ye - y0) * (xe - x0);
          }
          dst[y * ow + x] = window > 0 ? static_cast<float>(sum / window) : 0.0f;
        }
      }
    }
  });
}

void Elementwise(const PlanStep& step, const float* a, const float* b, float* out,
                 int64_t elements) {
  if (step.op == "add") {
    for (int64_t i = 0; i < elements; ++i) out[i] = a[i] + b[i];
  } else if (step.op == "relu") {
    for (int64_t i = 0; i < elements; ++i) out[i] = a[i] > 0 ? a[i] : 0;
  } else if (step.op == "clip") {
    for (int64_t i = 0; i < elements; ++i) {
      out[i] = std::min(std::max(a[i], step.clip_min), step.clip_max);
    }
  } else {  // copy
    std::copy(a, a + elements, out);
  }
}

void Softmax(const PlanStep& step, const float* in, float* out) {
  const int64_t outer = step.in_shape[0], axis = step.in_shape[1], inner = step.in_shape[2];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* src = in + o * axis * inner + i;
      float* dst = out + o * axis * inner + i;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t a = 0; a < axis; ++a) max = std::max(max, src[a * inner]);
      double sum = 0;
      for (int64_t a = 0; a < axis; ++a) {
        dst[a * inner] = std::exp(src[a * inner] - max);
        sum += dst[a * inner];
      }
      for (int64_t a = 0; a < axis; ++a) dst[a * inner] = static_cast<float>(dst[a * inner] / sum);
    }
  }
}

}  // namespace tunefleet
