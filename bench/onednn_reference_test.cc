#include "bench/onednn_reference.h"

#include <cmath>
#include <random>
#include <vector>

#include "bench/openblas_batch_matmul.h"
#include "gtest/gtest.h"
#include "tuner_core/workloads/conv_args.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace bench {
namespace {

std::vector<float> Random(size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) x = dist(gen);
  return v;
}

// Naive direct convolution, NCHW / OIHW (depthwise: C x 1 x R x S), double
// accumulation: the workload tests' brute force, element by element.
std::vector<float> NaiveConv(const ConvShape& s, const std::vector<float>& src,
                             const std::vector<float>& wei) {
  const workload_test::ConvShape shape = {
      s.n,        s.c,       s.h,        s.w,          s.k,         s.r,     s.s,    s.stride_h,
      s.stride_w, s.pad_top, s.pad_left, s.pad_bottom, s.pad_right, s.dil_h, s.dil_w};
  const ConvOutChannels out_channels =
      s.depthwise ? ConvOutChannels::kSameAsC : ConvOutChannels::kFromK;
  const int64_t oh = ConvOutHeight(s), ow = ConvOutWidth(s);
  std::vector<float> dst(static_cast<size_t>(s.n * s.k * oh * ow));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          dst[((n * s.k + k) * oh + y) * ow + x] =
              workload_test::DirectConv(shape, out_channels, src, wei, n, k, y, x);
        }
  return dst;
}

void ExpectConvMatchesNaive(const ConvShape& s, bool use_auto, int threads, float tol) {
  ASSERT_TRUE(ValidateConvShape(s).ok());
  const int64_t cin_per_group = s.depthwise ? 1 : s.c;
  std::vector<float> src = Random(s.n * s.c * s.h * s.w, 11);
  std::vector<float> wei = Random(s.k * cin_per_group * s.r * s.s, 12);
  std::vector<float> want = NaiveConv(s, src, wei);
  std::vector<float> got(want.size(), std::nanf(""));
  absl::Status st = OneDnnConvForTest(s, src.data(), wei.data(), got.data(), threads, use_auto);
  if (use_auto && absl::IsUnimplemented(st)) GTEST_SKIP() << st;
  ASSERT_TRUE(st.ok()) << st;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      if (++bad <= 5) ADD_FAILURE() << "at " << i << ": got " << got[i] << " want " << want[i];
    }
  }
  EXPECT_EQ(bad, 0);
}

ConvShape Strided3x3() {
  ConvShape s;
  s.n = 2, s.c = 5, s.h = 13, s.w = 10, s.k = 7, s.r = 3, s.s = 3;
  s.stride_h = 2, s.stride_w = 2;
  s.pad_top = 1, s.pad_left = 1, s.pad_bottom = 1, s.pad_right = 0;
  return s;
}

ConvShape Depthwise() {
  ConvShape s;
  s.n = 1, s.c = 24, s.h = 12, s.w = 11, s.k = 24, s.r = 3, s.s = 3;
  s.stride_h = 2, s.stride_w = 1;
  s.pad_top = 1, s.pad_left = 1, s.pad_bottom = 1, s.pad_right = 1;
  s.depthwise = true;
  return s;
}

TEST(OneDnnReference, ShapeHelpers) {
  ConvShape s = Strided3x3();
  EXPECT_EQ(ConvOutHeight(s), 7);  // (13 + 2 - 3) / 2 + 1
  EXPECT_EQ(ConvOutWidth(s), 5);   // (10 + 1 - 3) / 2 + 1
  EXPECT_DOUBLE_EQ(ConvFlops(s), 2.0 * 2 * 7 * 7 * 5 * 5 * 3 * 3);
  ConvShape bad = s;
  bad.depthwise = true;  // k != c
  EXPECT_EQ(ValidateConvShape(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = s;
  bad.r = 20;
  EXPECT_EQ(ValidateConvShape(bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OneDnnConvSeconds(bad, 1, 0.001).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(OneDnnReference, Strided3x3DirectMatchesNaive) {
  ExpectConvMatchesNaive(Strided3x3(), false, 1, 1e-4f);
}
TEST(OneDnnReference, Strided3x3AutoMatchesNaive) {
  ExpectConvMatchesNaive(Strided3x3(), true, 2, 1e-3f);
}
TEST(OneDnnReference, DepthwiseMatchesNaive) {
  ExpectConvMatchesNaive(Depthwise(), false, 2, 1e-4f);
}

TEST(OneDnnReference, DilatedMatchesNaive) {
  ConvShape s = Strided3x3();
  s.stride_h = s.stride_w = 1;
  s.dil_h = 2, s.dil_w = 3;
  s.pad_top = s.pad_bottom = 2, s.pad_left = s.pad_right = 3;
  ExpectConvMatchesNaive(s, false, 1, 1e-4f);
}

TEST(OneDnnReference, WideChannelsMatchesNaive) {  // blocked layouts (nChw16c) kick in
  ConvShape s;
  s.n = 1, s.c = 32, s.h = 9, s.w = 9, s.k = 48, s.r = 3, s.s = 3;
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  ExpectConvMatchesNaive(s, false, 2, 1e-4f);
  ExpectConvMatchesNaive(s, true, 2, 1e-3f);
}

TEST(OneDnnReference, TimesSmallShapes) {
  for (int threads : {1, 2}) {
    absl::StatusOr<ReferenceTiming> t = OneDnnConvSeconds(Strided3x3(), threads, 0.002);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_GT(t->seconds, 0);
    EXPECT_LT(t->seconds, 0.1);
    EXPECT_NE(t->algorithm.find(':'), std::string::npos) << t->algorithm;
  }
}

TEST(OneDnnReference, TimesDepthwise) {
  absl::StatusOr<ReferenceTiming> t = OneDnnConvSeconds(Depthwise(), 1, 0.002);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_GT(t->seconds, 0);
  EXPECT_FALSE(t->algorithm.empty());
}

void ExpectBatchMatmulMatchesNaive(bool b_is_nk) {
  const int64_t batch = 3, m = 17, n = 13, k = 29;
  std::vector<float> a = Random(batch * m * k, 21), b = Random(batch * n * k, 22);
  std::vector<float> c(batch * m * n, std::nanf(""));
  ASSERT_TRUE(OpenBlasBatchMatmul(batch, m, n, k, b_is_nk, a.data(), b.data(), c.data()).ok());
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t y = 0; y < m; ++y)
      for (int64_t x = 0; x < n; ++x) {
        double acc = 0;
        for (int64_t z = 0; z < k; ++z) {
          const float bv = b_is_nk ? b[(i * n + x) * k + z] : b[(i * k + z) * n + x];
          acc += static_cast<double>(a[(i * m + y) * k + z]) * bv;
        }
        EXPECT_NEAR(c[(i * m + y) * n + x], acc, 1e-4 * (1 + std::fabs(acc)))
            << "b=" << i << " m=" << y << " n=" << x;
      }
}

TEST(OpenBlasBatchMatmul, NkMatchesNaive) { ExpectBatchMatmulMatchesNaive(true); }
TEST(OpenBlasBatchMatmul, KnMatchesNaive) { ExpectBatchMatmulMatchesNaive(false); }

TEST(OpenBlasBatchMatmul, Times) {
  for (bool nk : {true, false}) {
    absl::StatusOr<double> t = OpenBlasBatchMatmulSeconds(4, 32, 48, 64, nk, 2, 0.002);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_GT(*t, 0);
  }
  EXPECT_EQ(OpenBlasBatchMatmulSeconds(0, 1, 1, 1, true, 1, 0.001).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bench
}  // namespace tunefleet
