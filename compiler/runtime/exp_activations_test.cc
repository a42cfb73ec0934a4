// Each instruction set's code (where this CPU has it) against libm over
// [-20, 20] and far beyond exp's range, at lengths that leave every tail,
// in place and not.
#include "compiler/runtime/exp_activations.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace runtime_ops {
namespace {

double Want(PointwiseFunc func, double v) {
  switch (func) {
    case PointwiseFunc::kExp:  // clamped to e^88.3, as the portable VecExp clamps
      return std::exp(std::min(v, static_cast<double>(88.3f)));
    case PointwiseFunc::kSigmoid:
      return 1 / (1 + std::exp(-v));
    case PointwiseFunc::kSilu:
      return v / (1 + std::exp(-v));
    case PointwiseFunc::kTanh:
      return std::tanh(v);
    case PointwiseFunc::kGelu:
      return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case PointwiseFunc::kGeluTanh:
      return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    default:
      return NAN;
  }
}

TEST(ExpActivationsTest, EachIsaMatchesLibm) {
  const PointwiseFunc funcs[] = {PointwiseFunc::kExp,  PointwiseFunc::kSigmoid,
                                 PointwiseFunc::kSilu, PointwiseFunc::kTanh,
                                 PointwiseFunc::kGelu, PointwiseFunc::kGeluTanh};
  int ran = 0;
  for (VectorIsa isa : {VectorIsa::kAvx2, VectorIsa::kAvx512}) {
    if (!CpuHas(isa)) continue;
    for (int64_t n : {1, 7, 8, 15, 16, 17, 4001}) {
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = -20.0f + 40.0f * i / std::max<int64_t>(n - 1, 1);
      x[0] = n > 1 ? -1000.0f : 3.0f;
      if (n > 2) x[1] = 100.0f;
      for (PointwiseFunc func : funcs) {
        std::vector<float> out(n, -7.0f), in_place = x;
        ASSERT_TRUE(ExpActivationRunOn(isa, func, x.data(), out.data(), n));
        ASSERT_TRUE(ExpActivationRunOn(isa, func, in_place.data(), in_place.data(), n));
        for (int64_t i = 0; i < n; ++i) {
          const double want = Want(func, x[i]);
          const double tolerance = 2e-6 * std::max(1.0, std::fabs(want));
          ASSERT_NEAR(out[i], want, tolerance)
              << PointwiseFuncName(func) << " at " << x[i] << " (n " << n << ")";
          ASSERT_EQ(out[i], in_place[i]);
        }
      }
      ++ran;
    }
  }
  if (ran == 0) GTEST_SKIP() << "this CPU has neither AVX2 with FMA nor AVX-512F";
  EXPECT_FALSE(ExpActivationRun(PointwiseFunc::kRelu, nullptr, nullptr, 0));
}

// Rows shorter than a register, of whole registers and blocks, with every
// tail; in place and not; values spread wide (the maximum comes off first).
TEST(ExpActivationsTest, SoftmaxRowsOnEachIsaMatchDouble) {
  int ran = 0;
  for (VectorIsa isa : {VectorIsa::kAvx2, VectorIsa::kAvx512}) {
    if (!CpuHas(isa)) continue;
    for (int64_t n : {1, 5, 8, 16, 17, 33, 49, 64, 65, 128, 1000}) {
      const int64_t rows = 3;
      std::vector<float> x(rows * n);
      for (int64_t i = 0; i < rows * n; ++i)
        x[i] = static_cast<float>((i * 7919) % 2001 - 1000) / 40;
      std::vector<float> out(x.size(), -7.0f), in_place = x;
      ASSERT_TRUE(SoftmaxRowsRunOn(isa, x.data(), out.data(), rows, n));
      ASSERT_TRUE(SoftmaxRowsRunOn(isa, in_place.data(), in_place.data(), rows, n));
      for (int64_t r = 0; r < rows; ++r) {
        double max = -INFINITY, sum = 0;
        for (int64_t i = 0; i < n; ++i) max = std::max<double>(max, x[r * n + i]);
        for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - max);
        for (int64_t i = 0; i < n; ++i) {
          const double want = std::exp(x[r * n + i] - max) / sum;
          ASSERT_NEAR(out[r * n + i], want, 1e-6 + 2e-6 * want) << "n " << n << " row " << r;
          ASSERT_EQ(out[r * n + i], in_place[r * n + i]);
        }
      }
      ++ran;
    }
  }
  if (ran == 0) GTEST_SKIP() << "this CPU has neither AVX2 with FMA nor AVX-512F";
}

// The one-pass epilogue against double arithmetic: each function it has,
// each kind of bias (periods below, equal to and above a register's lanes,
// and one neither divides), with and without a residual, at lengths that
// leave every tail, in place and not.
TEST(ExpActivationsTest, FusedEpilogueOnEachIsaMatchesDouble) {
  const float alpha = -0.5f, beta = 1.5f;
  auto want = [&](PointwiseFunc func, double v) {
    switch (func) {
      case PointwiseFunc::kNone:
        return v;
      case PointwiseFunc::kRelu:
        return std::max(v, 0.0);
      case PointwiseFunc::kClip:
        return std::min(std::max(v, double{alpha}), double{beta});
      case PointwiseFunc::kHardSigmoid:
        return std::max(0.0, std::min(1.0, alpha * v + beta));
      case PointwiseFunc::kHardSwish:
        return v * std::max(0.0, std::min(1.0, alpha * v + beta));
      default:
        return Want(func, v);
    }
  };
  const PointwiseFunc funcs[] = {PointwiseFunc::kNone,      PointwiseFunc::kRelu,
                                 PointwiseFunc::kClip,      PointwiseFunc::kHardSigmoid,
                                 PointwiseFunc::kHardSwish, PointwiseFunc::kSigmoid,
                                 PointwiseFunc::kSilu,      PointwiseFunc::kTanh,
                                 PointwiseFunc::kGelu,      PointwiseFunc::kGeluTanh};
  int ran = 0;
  for (VectorIsa isa : {VectorIsa::kAvx2, VectorIsa::kAvx512}) {
    if (!CpuHas(isa)) continue;
    const int64_t lanes = isa == VectorIsa::kAvx512 ? 16 : 8;
    EXPECT_EQ(FusedEpilogueOn(isa, PointwiseFunc::kSilu, EpilogueBias::kPeriodic, false, 3),
              nullptr);
    EXPECT_EQ(FusedEpilogueOn(isa, PointwiseFunc::kElu, EpilogueBias::kNone, false, 0), nullptr);
    for (int64_t n :
         {int64_t{1}, lanes - 1, lanes, 3 * lanes + 5, 4 * lanes, 9 * lanes + 3, int64_t{1001}}) {
      // A per-position bias has n values (one per element); a periodic one
      // at most 64.
      std::vector<float> x(n), bias(std::max<int64_t>(n, 64)), residual(n);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = static_cast<float>((i * 7919) % 401 - 200) / 20;
        residual[i] = static_cast<float>((i * 104729) % 101 - 50) / 25;
      }
      for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i % 13) / 4 - 1.5f;
      for (PointwiseFunc func : funcs) {
        for (EpilogueBias kind :
             {EpilogueBias::kNone, EpilogueBias::kPerPosition, EpilogueBias::kPeriodic}) {
          const std::vector<int64_t> periods = kind == EpilogueBias::kPeriodic
                                                   ? std::vector<int64_t>{1, 4, 8, 16, 32, 64, 48}
                                                   : std::vector<int64_t>{0};
          for (int64_t period : periods) {
            if (period % lanes != 0 && lanes % std::max<int64_t>(period, 1) != 0) continue;
            for (bool with_residual : {false, true}) {
              const FusedEpilogueFn fn = FusedEpilogueOn(isa, func, kind, with_residual, period);
              ASSERT_NE(fn, nullptr) << PointwiseFuncName(func) << " period " << period;
              std::vector<float> out(n, -7.0f), in_place = x;
              const float* r = with_residual ? residual.data() : nullptr;
              fn(x.data(), out.data(), bias.data(), period, r, n, alpha, beta);
              fn(in_place.data(), in_place.data(), bias.data(), period, r, n, alpha, beta);
              for (int64_t i = 0; i < n; ++i) {
                double v = x[i];
                if (kind == EpilogueBias::kPerPosition) v += bias[i];
                if (kind == EpilogueBias::kPeriodic) v += bias[i % period];
                if (with_residual) v += residual[i];
                const double expected = want(func, v);
                ASSERT_NEAR(out[i], expected, 2e-6 * std::max(1.0, std::fabs(expected)))
                    << PointwiseFuncName(func) << " n " << n << " bias kind "
                    << static_cast<int>(kind) << " period " << period << " residual "
                    << with_residual << " at " << i;
                ASSERT_EQ(out[i], in_place[i]);
              }
            }
          }
        }
      }
    }
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "this CPU has neither AVX2 with FMA nor AVX-512F";
}

}  // namespace
}  // namespace runtime_ops
}  // namespace tunefleet
