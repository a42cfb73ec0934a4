// The runtime's vectorised operators against plain reference loops: the
// epilogue in every case (bias, residual, relu/clip/SiLU...; blocks of 16,
// 8, 4, 6 and 3 lanes), max and average pooling with padding (both count_include_pad
// modes) in a blocked layout, relayouts (narrowing rows, between blocks)
// and channel gathers between blocks.
#include "compiler/runtime/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

void SerialFor(void*, int64_t n, TfParallelBody body, void* closure) {
  for (int64_t i = 0; i < n; ++i) body(i, closure);
}
const TfRuntime kSerial = {TF_KERNEL_ABI_VERSION, 1, nullptr, &SerialFor, nullptr, nullptr};

std::vector<float> Random(int64_t n, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Quotients and remainders as integer division gives them, at multiples
// of the divisor and one either side, up to 2^50.
TEST(OpsTest, FastDivisorMatchesIntegerDivision) {
  for (int64_t d : {int64_t{1}, int64_t{3}, int64_t{7}, int64_t{29}, int64_t{4096}, int64_t{602112},
                    (int64_t{1} << 31) - 1}) {
    const FastDivisor by(d);
    for (int64_t q : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{1000}, int64_t{123456789},
                      (int64_t{1} << 50) / d}) {
      for (int64_t delta : {-1, 0, 1}) {
        const int64_t x = q * d + delta;
        if (x < 0) continue;
        ASSERT_EQ(by.Quotient(x), x / d) << x << " / " << d;
        ASSERT_EQ(by.Remainder(x), x % d) << x << " % " << d;
      }
    }
  }
}

// Packed weights [K/ob][C/ib][R*S][ib][ob] times s[c] along their input
// channels c = icc * ib + i.
TEST(OpsTest, ScaleWeightsScalesEachInputChannel) {
  const int64_t occ = 2, icc = 3, taps = 9, ib = 4, ob = 8;
  const std::vector<float> w = Random(occ * icc * taps * ib * ob, 1);
  const std::vector<float> s = Random(icc * ib, 2);
  std::vector<float> out(w.size());
  PlanStep step;
  step.op = StepOp::kScaleWeights;
  step.in_shape = {occ, icc, taps, ib, ob};
  ScaleWeights(step, w.data(), s.data(), out.data(), &kSerial);
  for (int64_t o = 0; o < occ; ++o) {
    for (int64_t c = 0; c < icc; ++c) {
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t i = 0; i < ib; ++i) {
          for (int64_t k = 0; k < ob; ++k) {
            const int64_t at = ((((o * icc + c) * taps + t) * ib + i) * ob) + k;
            ASSERT_EQ(out[at], w[at] * s[c * ib + i]) << at;
          }
        }
      }
    }
  }
}

TEST(OpsTest, EpilogueMatchesReferenceInEveryCase) {
  // Blocked (16, 6 and 3 lanes, and 160: more than the period its bias
  // repeats to), NCHW (1 lane, rows of 35) and dense ([rows, channels]:
  // inner and block 1).
  for (auto [block, inner] : {std::pair<int64_t, int64_t>{16, 35},
                              {8, 14},
                              {4, 35},
                              {6, 35},
                              {3, 35},
                              {160, 3},
                              {1, 35},
                              {1, 1}}) {
    for (PointwiseFunc activation :
         {PointwiseFunc::kNone, PointwiseFunc::kRelu, PointwiseFunc::kClip,
          PointwiseFunc::kHardSwish, PointwiseFunc::kElu, PointwiseFunc::kGelu,
          PointwiseFunc::kSilu}) {
      for (int with = 0b00; with <= 0b11; ++with) {
        PlanEpilogue e;
        e.activation = {activation, -0.5f, 1.5f};
        e.channels = block == 1 ? 12 : block * 4;
        e.block = block;
        e.inner = inner;
        const int64_t elements = 2 * e.channels * e.inner;  // two images
        const std::vector<float> bias = Random(e.channels, 1), residual = Random(elements, 2);
        std::vector<float> y = Random(elements, 3), want = y, hooked = y;
        const bool has_bias = with & 1, has_residual = with & 2;
        for (int64_t i = 0; i < elements; ++i) {
          const int64_t row = i / (e.inner * block), lane = i % block;
          float v = want[i];
          if (has_bias) v += bias[(row % (e.channels / block)) * block + lane];
          if (has_residual) v += residual[i];
          if (activation == PointwiseFunc::kRelu) v = std::max(v, 0.0f);
          if (activation == PointwiseFunc::kClip) v = std::min(std::max(v, -0.5f), 1.5f);
          if (activation == PointwiseFunc::kHardSwish) {
            v *= std::min(std::max(-0.5f * v + 1.5f, 0.0f), 1.0f);
          }
          if (activation == PointwiseFunc::kElu && v < 0) v = -0.5f * std::expm1(v);
          if (activation == PointwiseFunc::kGelu)
            v = 0.5f * v * (1 + std::erf(v / std::sqrt(2.0f)));
          if (activation == PointwiseFunc::kSilu) v = v / (1 + std::exp(-v));
          want[i] = v;
        }
        ApplyEpilogue(e, has_bias ? bias.data() : nullptr, has_residual ? residual.data() : nullptr,
                      y.data(), elements, &kSerial);
        // The same through the hook a kernel calls, on regions cut at random
        // (through channel blocks and runs too); one past the end does nothing.
        const BoundEpilogue bound =
            BindEpilogue(e, has_bias ? bias.data() : nullptr,
                         has_residual ? residual.data() : nullptr, hooked.data(), elements);
        bound.hook.apply(&bound.hook, elements - 3, 1, 4, 0);
        std::mt19937 rng(with + 7 * block);
        for (int64_t at = 0; at < elements;) {
          const int64_t len =
              std::min(elements - at, std::uniform_int_distribution<int64_t>(1, 70)(rng));
          bound.hook.apply(&bound.hook, at, 1, len, 0);
          at += len;
        }
        for (int64_t i = 0; i < elements; ++i) {
          ASSERT_NEAR(y[i], want[i], 2e-6f)
              << "block " << block << " inner " << inner << " " << PointwiseFuncName(activation)
              << " bias " << has_bias << " residual " << has_residual;
          ASSERT_NEAR(hooked[i], want[i], 2e-6f) << "hooked: block " << block << " inner " << inner
                                                 << " " << PointwiseFuncName(activation) << " bias "
                                                 << has_bias << " residual " << has_residual;
        }
      }
    }
  }
}

// [C/b, H, W, b] of one image.
float At(const std::vector<float>& t, int64_t b, int64_t h, int64_t w, int64_t c, int64_t y,
         int64_t x) {
  return t[(((c / b) * h + y) * w + x) * b + c % b];
}

TEST(OpsTest, PoolingWithPaddingMatchesReference) {
  const int64_t c = 96, h = 9, w = 11;
  const std::vector<float> in = Random(c * h * w, 4);
  // Strides 2 and 1 (Inception's average pools): rows of 6 and 11 outputs,
  // whose inner ones the blocked layouts pool four at a time and NCHW (b 1)
  // eight at a time at stride 1 (the 9 inside the row: two groups that
  // overlap).
  for (int64_t st : {2, 1})
    for (int64_t b : {16, 8, 24, 32, 12, 4, 6, 1})  // vectors of 8 lanes, of 4, any block, NCHW
      for (const char* op : {"max_pool", "avg_pool"}) {
        PlanBuffer in_layout{"x", c * h * w, -1, {1, c, h, w}, b, 0};
        for (bool include_pad : {false, true}) {
          PlanStep step;
          step.op = std::string(op) == "max_pool" ? StepOp::kMaxPool : StepOp::kAvgPool;
          step.kernel_shape = {3, 3};
          step.strides = {st, st};
          step.pads = {1, 1, 1, 1};
          step.count_include_pad = include_pad;
          const int64_t oh = (h + 2 - 3) / st + 1, ow = (w + 2 - 3) / st + 1;
          step.in_shape = {1, c, h, w};
          step.out_shape = {1, c, oh, ow};
          PlanBuffer out_layout{"y", c * oh * ow, -1, {1, c, oh, ow}, b, 0};
          std::vector<float> out(c * oh * ow);
          Pool(step, in_layout, in.data(), out_layout, out.data(), &kSerial);
          for (int64_t ch = 0; ch < c; ++ch) {
            for (int64_t y = 0; y < oh; ++y) {
              for (int64_t x = 0; x < ow; ++x) {
                float max = -std::numeric_limits<float>::infinity(), sum = 0;
                int64_t count = 0;
                for (int64_t iy = y * st - 1; iy < y * st + 2; ++iy) {
                  for (int64_t ix = x * st - 1; ix < x * st + 2; ++ix) {
                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                    max = std::max(max, At(in, b, h, w, ch, iy, ix));
                    sum += At(in, b, h, w, ch, iy, ix);
                    ++count;
                  }
                }
                // The padded window, clipped to the padded image.
                const int64_t rows = std::min(y * st + 2, h + 1) - (y * st - 1);
                const int64_t cols = std::min(x * st + 2, w + 1) - (x * st - 1);
                const float want = step.op == StepOp::kMaxPool ? max
                                   : include_pad               ? sum / (rows * cols)
                                                               : sum / count;
                EXPECT_FLOAT_EQ(At(out, b, oh, ow, ch, y, x), want)
                    << op << " stride " << st << " block " << b << " include_pad " << include_pad
                    << " c " << ch << " y " << y << " x " << x;
              }
            }
          }
        }
      }
}

// The global mean of each channel, in blocks of 8 lanes and more (vectors
// of 8 with a tail of lanes for 12 and 29), one lane (NCHW, rows summed 8
// positions at a time with a tail), rows wider than the image (only w
// positions count) and widths that leave a tail after the unrolled loop.
TEST(OpsTest, GlobalAveragePoolMatchesReference) {
  const int64_t h = 7;
  for (int64_t b : {1, 8, 16, 24, 12, 29}) {
    for (int64_t w : {11, 16, 3}) {
      const int64_t c = b == 1 ? 5 : 3 * b, row = w + 3;
      const std::vector<float> in = Random(c * h * row, 11);
      PlanBuffer in_layout{"x", c * h * row, -1, {1, c, h, w}, b, row};
      PlanBuffer out_layout{"y", c, -1, {1, c}, 1, 0};
      PlanStep step;
      step.op = StepOp::kGlobalAvgPool;
      step.in_shape = {1, c, h, w};
      step.out_shape = {1, c};
      std::vector<float> out(c);
      Pool(step, in_layout, in.data(), out_layout, out.data(), &kSerial);
      for (int64_t ch = 0; ch < c; ++ch) {
        double sum = 0;
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t x = 0; x < w; ++x) sum += At(in, b, h, row, ch, y, x);
        }
        EXPECT_NEAR(out[ch], sum / (h * w), 1e-6) << "block " << b << " w " << w << " c " << ch;
      }
    }
  }
}

TEST(OpsTest, RelayoutNarrowingRowsKeepsEveryValue) {
  const int64_t c = 32, h = 5, w = 7, b = 16, wide = 8;
  const std::vector<float> in = Random(c * h * wide, 5);
  PlanBuffer from{"x", c * h * wide, -1, {1, c, h, w}, b, wide};
  PlanBuffer to{"x", c * h * w, -1, {1, c, h, w}, b, 0};
  std::vector<float> out(c * h * w);
  Relayout(from, in.data(), to, out.data(), &kSerial);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        ASSERT_EQ(At(out, b, h, w, ch, y, x), At(in, b, h, wide, ch, y, x));
      }
    }
  }
}

TEST(OpsTest, RelayoutBetweenBlocksKeepsEveryValue) {
  // 48 channels from blocks of 16 to 12 (runs split across source blocks),
  // to 48, and from 48 back to 8; rows of 9 wide into rows of 7; enough
  // rows that tasks take several, the last of a plane fewer.
  const int64_t c = 48, h = 37, w = 7, wide = 9;
  const std::vector<float> in = Random(c * h * wide, 6);
  const PlanBuffer from{"x", c * h * wide, -1, {1, c, h, w}, 16, wide};
  for (int64_t db : {12, 48, 8, 1}) {
    const PlanBuffer to{"x", c * h * w, -1, {1, c, h, w}, db, 0};
    std::vector<float> out(c * h * w);
    Relayout(from, in.data(), to, out.data(), &kSerial);
    std::vector<float> back(c * h * wide);
    Relayout(to, out.data(), from, back.data(), &kSerial);
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          ASSERT_EQ(At(out, db, h, w, ch, y, x), At(in, 16, h, wide, ch, y, x)) << "block " << db;
          ASSERT_EQ(At(back, 16, h, wide, ch, y, x), At(in, 16, h, wide, ch, y, x)) << db;
        }
      }
    }
  }
}

// Blocks wider than the runs a task keeps (kMaxGatherLanes): 160 channels
// from blocks of 16 into one block of 160 (its runs found row by row) and
// back.
TEST(OpsTest, RelayoutIntoAVeryWideBlockKeepsEveryValue) {
  const int64_t c = 160, h = 3, w = 5;
  const std::vector<float> in = Random(c * h * w, 12);
  const PlanBuffer from{"x", c * h * w, -1, {1, c, h, w}, 16, 0};
  const PlanBuffer to{"x", c * h * w, -1, {1, c, h, w}, 160, 0};
  std::vector<float> out(c * h * w), back(c * h * w);
  Relayout(from, in.data(), to, out.data(), &kSerial);
  Relayout(to, out.data(), from, back.data(), &kSerial);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) {
        ASSERT_EQ(At(out, 160, h, w, ch, y, x), At(in, 16, h, w, ch, y, x));
      }
    }
  }
  EXPECT_EQ(back, in);
}

// 1x1 planes (a squeeze-excite's scales): a relayout between any blocks,
// and a gather, keep each channel's value; two images.
TEST(OpsTest, RelayoutAndGatherOfOneByOnePlanes) {
  const int64_t c = 48;
  const std::vector<float> in = Random(2 * c, 11);
  const PlanBuffer from{"x", 2 * c, -1, {2, c, 1, 1}, 16, 0};
  for (int64_t db : {1, 8, 48}) {
    const PlanBuffer to{"x", 2 * c, -1, {2, c, 1, 1}, db, 0};
    std::vector<float> out(2 * c, -1.0f);
    Relayout(from, in.data(), to, out.data(), &kSerial);
    EXPECT_EQ(out, in) << "block " << db;
  }
  PlanStep step;
  step.op = StepOp::kChannelGather;
  step.in_shape = {2, c, 1, 1};
  step.out_shape = {2, c / 2, 1, 1};
  for (int64_t j = 0; j < c / 2; ++j) step.indices.push_back(c - 1 - 2 * j);
  const PlanBuffer to{"y", c, -1, {2, c / 2, 1, 1}, 8, 0};
  std::vector<float> out(c, -1.0f);
  ChannelGather(step, from, in.data(), to, out.data(), &kSerial);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t j = 0; j < c / 2; ++j) {
      ASSERT_EQ(out[n * (c / 2) + j], in[n * c + c - 1 - 2 * j]) << n << " " << j;
    }
  }
}

// Channel gathers between layouts: a shuffle of 2 groups (no two output
// lanes from one run), a slice of the second half (whole runs), a reversed
// pick; from blocks of 29 (rows 9 wide) into blocks of 29, 4 and 1.
TEST(OpsTest, ChannelGatherPicksEachChannelInAnyLayout) {
  const int64_t c = 58, h = 23, w = 7, wide = 9;
  const std::vector<float> in = Random(2 * c * h * wide, 7);  // two images
  const PlanBuffer from{"x", 2 * c * h * wide, -1, {2, c, h, w}, 29, wide};
  std::vector<std::vector<int64_t>> maps(3);
  for (int64_t j = 0; j < c; ++j) maps[0].push_back((j % 2) * (c / 2) + j / 2);
  for (int64_t j = c / 2; j < c; ++j) maps[1].push_back(j);
  for (int64_t j = c - 1; j >= 0; j -= 2) maps[2].push_back(j);
  for (const std::vector<int64_t>& map : maps) {
    const int64_t out_c = static_cast<int64_t>(map.size());
    for (int64_t db : {int64_t{29}, int64_t{4}, int64_t{1}}) {
      if (out_c % db != 0) continue;
      PlanStep step;
      step.op = StepOp::kChannelGather;
      step.in_shape = {2, c, h, w};
      step.out_shape = {2, out_c, h, w};
      step.indices = map;
      const PlanBuffer to{"y", 2 * out_c * h * w, -1, {2, out_c, h, w}, db, 0};
      std::vector<float> out(2 * out_c * h * w, -1.0f);
      ChannelGather(step, from, in.data(), to, out.data(), &kSerial);
      for (int64_t n = 0; n < 2; ++n) {
        for (int64_t ch = 0; ch < out_c; ++ch) {
          for (int64_t y = 0; y < h; ++y) {
            for (int64_t x = 0; x < w; ++x) {
              const float got =
                  out[((n * (out_c / db) + ch / db) * h + y) * w * db + x * db + ch % db];
              const int64_t src = map[ch];
              const float want =
                  in[((n * (c / 29) + src / 29) * h + y) * wide * 29 + x * 29 + src % 29];
              ASSERT_EQ(got, want) << "out channel " << ch << " of " << out_c << ", block " << db;
            }
          }
        }
      }
    }
  }
}

// Every pointwise function against libm over a range that covers its
// regions (saturation, the negative branch), in place and not.
TEST(OpsTest, PointwiseFunctionsMatchLibm) {
  const int64_t n = 4001;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -20.0f + 40.0f * static_cast<float>(i) / (n - 1);
  struct Case {
    PointwiseFunc func;
    float alpha, beta;
    double (*want)(double, double, double);
  };
  const Case cases[] = {
      {PointwiseFunc::kExp, 0, 0, [](double v, double, double) { return std::exp(v); }},
      {PointwiseFunc::kErf, 0, 0, [](double v, double, double) { return std::erf(v); }},
      {PointwiseFunc::kTanh, 0, 0, [](double v, double, double) { return std::tanh(v); }},
      {PointwiseFunc::kSigmoid, 0, 0,
       [](double v, double, double) { return 1 / (1 + std::exp(-v)); }},
      {PointwiseFunc::kSilu, 0, 0, [](double v, double, double) { return v / (1 + std::exp(-v)); }},
      {PointwiseFunc::kGelu, 0, 0,
       [](double v, double, double) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {PointwiseFunc::kGeluTanh, 0, 0,
       [](double v, double, double) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
       }},
      {PointwiseFunc::kHardSwish, 1.0f / 6, 0.5f,
       [](double v, double a, double b) { return v * std::max(0.0, std::min(1.0, a * v + b)); }},
      {PointwiseFunc::kLeakyRelu, 0.1f, 0,
       [](double v, double a, double) { return v < 0 ? a * v : v; }},
      {PointwiseFunc::kElu, 2.0f, 0,
       [](double v, double a, double) { return v < 0 ? a * std::expm1(v) : v; }},
      {PointwiseFunc::kClip, -INFINITY, 3,
       [](double v, double, double) { return std::min(v, 3.0); }},
  };
  for (const Case& c : cases) {
    PlanStep step{.op = StepOp::kPointwise};
    step.activation = {c.func, c.alpha, c.beta};
    std::vector<float> out(n), in_place = x;
    Elementwise(step, x.data(), nullptr, out.data(), n, &kSerial);
    PlanEpilogue e;
    e.activation = step.activation;
    ApplyEpilogue(e, nullptr, nullptr, in_place.data(), n, &kSerial);
    for (int64_t i = 0; i < n; ++i) {
      const double want = c.want(x[i], c.alpha, c.beta);
      const double tolerance = 2e-6 * std::max(1.0, std::fabs(want));
      ASSERT_NEAR(out[i], want, tolerance) << PointwiseFuncName(c.func) << " at " << x[i];
      ASSERT_NEAR(in_place[i], want, tolerance) << PointwiseFuncName(c.func) << " epilogue";
    }
    if (c.func == PointwiseFunc::kExp || c.func == PointwiseFunc::kElu) continue;
    // Far beyond exp's range both ways: the limits, never inf or NaN.
    std::vector<float> far = {-1000.0f, -100.0f, 100.0f, 1000.0f}, far_out(far.size());
    Elementwise(step, far.data(), nullptr, far_out.data(), far.size(), &kSerial);
    for (size_t i = 0; i < far.size(); ++i) {
      const double want = c.want(far[i], c.alpha, c.beta);
      ASSERT_NEAR(far_out[i], want, 2e-6 * std::max(1.0, std::fabs(want)))
          << PointwiseFuncName(c.func) << " at " << far[i];
    }
  }
}

// An unfolded BatchNormalization with its ReLU (DenseNet's) in NCHW16c
// with rows wider than the image, in NCHW, and on a plain [N, C, inner].
TEST(OpsTest, BatchNormInEachLayoutWithItsActivation) {
  const int64_t n = 2, c = 32, h = 3, w = 5;
  const std::vector<float> scale = Random(c, 1), bias = Random(c, 2), mean = Random(c, 3);
  std::vector<float> var = Random(c, 4);
  for (float& v : var) v = std::fabs(v);
  for (int64_t block : {16, 1, 0}) {  // 0: a 3-D [N, C, H * W] tensor
    const int64_t row = block == 16 ? 7 : w, lanes = std::max<int64_t>(block, 1);
    PlanBuffer layout{"x", n * c * h * row, -1, {n, c, h, w}, lanes, row};
    if (block == 0) layout.shape = {n, c, h * w};
    const std::vector<float> x = Random(layout.elements, 5);
    std::vector<float> out(x.size());
    PlanStep step{.op = StepOp::kBatchNorm};
    step.in_shape = {n, c, h * w};
    step.alpha = 1e-3f;
    step.activation = {PointwiseFunc::kRelu, 0, 0};
    BatchNorm(step, layout, {x.data(), scale.data(), bias.data(), mean.data(), var.data()},
              out.data(), &kSerial);
    for (int64_t i = 0; i < layout.elements; ++i) {
      const int64_t rows = i / (row * lanes);  // (image, channel block, y) or (image, channel)
      const int64_t ch =
          block == 0 ? (i / (h * w)) % c : ((rows / h) % (c / lanes)) * lanes + i % lanes;
      const float s = scale[ch] / std::sqrt(var[ch] + 1e-3f);
      ASSERT_NEAR(out[i], std::max(0.0f, (x[i] - mean[ch]) * s + bias[ch]), 1e-5f)
          << "block " << block << " at " << i;
    }
  }
}

// A squeeze-excite scale in NCHW16c and NCHW8c with rows wider than the
// image, and in NCHW: every channel times its own value, per image (tasks
// of several rows, the last of a plane shorter).
TEST(OpsTest, ChannelBinaryScalesEachChannelInItsLayout) {
  const int64_t n = 2, c = 32, h = 37, w = 5;
  for (int64_t block : {16, 8, 1}) {
    const int64_t row = block > 1 ? 7 : w;
    const PlanBuffer layout{"x", n * c * h * row, -1, {n, c, h, w}, block, row};
    const std::vector<float> a = Random(layout.elements, 8), s = Random(n * c, 9);
    std::vector<float> out(a.size());
    PlanStep step{.op = StepOp::kChannelBinary};
    step.binary = BinaryFunc::kMul;
    step.in_shape = {n, c};
    ChannelBinary(step, layout, a.data(), s.data(), out.data(), &kSerial);
    for (int64_t i = 0; i < layout.elements; ++i) {
      const int64_t lane = i % block, rows = i / (row * block);  // (image, channel block, y)
      const int64_t image = rows / ((c / block) * h), cb = (rows / h) % (c / block);
      ASSERT_FLOAT_EQ(out[i], a[i] * s[image * c + cb * block + lane]) << block << " " << i;
    }
  }
}

// Rows short and long (past the 16 running partials and the vector exp's
// blocks, a tail left), and a middle axis over more columns than one task
// takes; values spread wide, so the maximum must come off first.
TEST(OpsTest, SoftmaxOfRowsAndOfAMiddleAxis) {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {6, 5, 1}, {3, 49, 1}, {2, 133, 1}, {2, 5, 3}, {2, 7, 300}}) {
    std::vector<float> x = Random(shape[0] * shape[1] * shape[2], 7);
    for (float& v : x) v *= 20;
    PlanStep step{.op = StepOp::kSoftmax};
    step.in_shape = shape;
    std::vector<float> out(x.size());
    Softmax(step, x.data(), nullptr, out.data(), &kSerial);
    for (int64_t o = 0; o < shape[0]; ++o) {
      for (int64_t i = 0; i < shape[2]; ++i) {
        double sum = 0;
        for (int64_t a = 0; a < shape[1]; ++a)
          sum += std::exp(static_cast<double>(x[(o * shape[1] + a) * shape[2] + i]));
        for (int64_t a = 0; a < shape[1]; ++a) {
          const int64_t at = (o * shape[1] + a) * shape[2] + i;
          ASSERT_NEAR(out[at], std::exp(static_cast<double>(x[at])) / sum, 1e-6)
              << shape[0] << "x" << shape[1] << "x" << shape[2] << " at " << at;
        }
      }
    }
  }
}

// softmax(x + bias) along the last axis, the bias broadcast over the first
// axis and read transposed (a stride of 3 along the row): the sum's
// softmax, rows long enough for the vector code and a tail.
TEST(OpsTest, SoftmaxOfASumReadsTheBiasThroughItsStrides) {
  for (int64_t n : {5, 37}) {
    const std::vector<float> x = Random(2 * 3 * n, 3), bias = Random(n * 3, 4);
    PlanStep step{.op = StepOp::kSoftmax};
    step.in_shape = {6, n, 1};
    step.out_shape = {2, 3, n};
    step.b_strides = {0, 1, 3};
    std::vector<float> out(x.size());
    Softmax(step, x.data(), bias.data(), out.data(), &kSerial);
    for (int64_t r = 0; r < 6; ++r) {
      std::vector<double> e(n);
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        e[k] = std::exp(static_cast<double>(x[r * n + k]) + bias[k * 3 + r % 3]);
        sum += e[k];
      }
      for (int64_t k = 0; k < n; ++k) {
        ASSERT_NEAR(out[r * n + k], e[k] / sum, 1e-6) << "n " << n << " row " << r << " at " << k;
      }
    }
  }
}

// Each reduction over the middle axis of [outer, axis, inner]: contiguous
// runs (inner 1: vectors of 16, the lanes, a tail) and strided rows.
TEST(OpsTest, ReductionsOverAnAxisMatchTheReference) {
  for (ReduceFunc func :
       {ReduceFunc::kMean, ReduceFunc::kSum, ReduceFunc::kMax, ReduceFunc::kMin}) {
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
             {3, 5, 1}, {3, 16, 1}, {2, 37, 1}, {2, 768, 1}, {3, 7, 3}}) {
      const std::vector<float> x = Random(shape[0] * shape[1] * shape[2], 9);
      PlanStep step{.op = StepOp::kReduce};
      step.in_shape = shape;
      step.reduce = func;
      std::vector<float> out(shape[0] * shape[2]);
      RunTensorOp(step, {x.data()}, out.data(), static_cast<int64_t>(out.size()), &kSerial);
      for (int64_t o = 0; o < shape[0]; ++o) {
        for (int64_t i = 0; i < shape[2]; ++i) {
          double sum = 0, max = -1e30, min = 1e30;
          for (int64_t a = 0; a < shape[1]; ++a) {
            const double v = x[(o * shape[1] + a) * shape[2] + i];
            sum += v;
            max = std::max(max, v);
            min = std::min(min, v);
          }
          const double want = func == ReduceFunc::kMean  ? sum / shape[1]
                              : func == ReduceFunc::kSum ? sum
                              : func == ReduceFunc::kMax ? max
                                                         : min;
          ASSERT_NEAR(out[o * shape[2] + i], want, 1e-5)
              << static_cast<int>(func) << " " << shape[0] << "x" << shape[1] << "x" << shape[2];
        }
      }
    }
  }
}

// Where's select (BinaryFunc::kSelect): the fill where it is not NaN, the
// operand where it is, with the fill broadcast along rows wider than a
// vector, and operands that are themselves infinite or NaN kept exactly.
TEST(OpsTest, SelectKeepsTheOperandWhereTheFillIsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t rows = 3, width = 37;
  std::vector<float> a = Random(rows * width, 11);
  a[5] = inf;
  a[width + 6] = nan;
  std::vector<float> fill(width);
  for (int64_t x = 0; x < width; ++x) fill[x] = x % 3 == 0 ? -inf : x % 3 == 1 ? nan : 2.5f;
  PlanStep step{.op = StepOp::kBroadcast};
  step.binary = BinaryFunc::kSelect;
  step.out_shape = {rows, width};
  step.a_strides = {width, 1};
  step.b_strides = {0, 1};
  std::vector<float> out(rows * width);
  RunTensorOp(step, {a.data(), fill.data()}, out.data(), rows * width, &kSerial);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t x = 0; x < width; ++x) {
      const float want = std::isnan(fill[x]) ? a[r * width + x] : fill[x];
      const float got = out[r * width + x];
      ASSERT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << r << ", " << x;
    }
  }
}

// Transposes as strided copies, checked element by element: channels-last
// windows back to NCHW (rows read at a stride, another axis contiguous:
// copied in 8x8 tiles), with channel counts and widths 8 does and does not
// divide (whole tiles, a tile's leftover columns, leftover rows), widths
// above 64 (attention's transposed keys), a 2-D transpose, an offset, and
// a transpose whose rows are contiguous (copied row by row).
TEST(OpsTest, TransposesCopyEveryElement) {
  struct Case {
    std::vector<int64_t> in;
    std::vector<int64_t> perm;
  };
  for (const Case& c : std::vector<Case>{{{1, 2, 3, 7, 7, 16}, {0, 5, 1, 3, 2, 4}},
                                         {{2, 5, 13}, {0, 2, 1}},
                                         {{3, 4, 9, 8}, {3, 0, 2, 1}},
                                         {{2, 6, 4}, {1, 0, 2}},
                                         {{128, 1, 256}, {1, 2, 0}},
                                         {{19, 2, 16}, {1, 2, 0}},
                                         {{13, 21}, {1, 0}},
                                         {{24, 1, 40}, {1, 2, 0}}}) {
    const int64_t rank = static_cast<int64_t>(c.in.size());
    std::vector<int64_t> in_strides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * c.in[d + 1];
    int64_t total = 1;
    for (int64_t d : c.in) total *= d;
    const std::vector<float> x = Random(total + 3, 5);
    PlanStep step{.op = StepOp::kStridedCopy};
    step.a_offset = 3;  // the input starts 3 floats in
    for (int64_t d : c.perm) {
      step.out_shape.push_back(c.in[d]);
      step.a_strides.push_back(in_strides[d]);
    }
    std::vector<float> out(total, -1.0f);
    RunTensorOp(step, {x.data()}, out.data(), total, &kSerial);
    for (int64_t i = 0; i < total; ++i) {
      int64_t rest = i, at = step.a_offset;
      for (int64_t d = rank - 1; d >= 0; --d) {
        at += (rest % step.out_shape[d]) * step.a_strides[d];
        rest /= step.out_shape[d];
      }
      ASSERT_EQ(out[i], x[at]) << c.in.size() << "-D case, element " << i;
    }
  }
}

}  // namespace
}  // namespace tunefleet
