#include "kernel_runtime/tensor_data.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/workloads/dense.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Workload> Dense(int64_t m, int64_t n, int64_t k) {
  auto workload = MakeWorkload("dense", {{"M", m}, {"N", n}, {"K", k}});
  EXPECT_TRUE(workload.ok()) << workload.status();
  return std::move(workload).value();
}

std::unique_ptr<PreparedWorkload> Prepare(int64_t m, int64_t n, int64_t k, uint64_t seed = 1) {
  auto prepared = PreparedWorkload::Make(Dense(m, n, k), seed);
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  return std::move(prepared).value();
}

// What a straightforward kernel does: dense NK, fp32 accumulator, k in
// order, optionally dropping the product at (row, col, k_to_drop).
void NaiveFp32Dense(PreparedWorkload& p, int64_t drop_row = -1, int64_t drop_col = -1,
                    int64_t drop_k = -1) {
  const auto& dense = static_cast<const DenseWorkload&>(p.workload());
  const float* a = p.buffer(0);
  const float* b = p.buffer(1);
  float* c = p.buffer(2);
  for (int64_t i = 0; i < dense.m(); ++i) {
    for (int64_t j = 0; j < dense.n(); ++j) {
      float sum = 0.0f;
      for (int64_t kk = 0; kk < dense.k(); ++kk) {
        if (i == drop_row && j == drop_col && kk == drop_k) continue;
        sum += a[i * dense.k() + kk] * b[j * dense.k() + kk];
      }
      c[i * dense.n() + j] = sum;
    }
  }
}

TEST(FillUniformTest, DeterministicInRangeAndSeedDependent) {
  constexpr int64_t kCount = 100000;
  std::vector<float> first(kCount), again(kCount), other_seed(kCount), other_stream(kCount);
  FillUniform(first.data(), kCount, /*seed=*/7, /*stream=*/0);
  FillUniform(again.data(), kCount, 7, 0);
  FillUniform(other_seed.data(), kCount, 8, 0);
  FillUniform(other_stream.data(), kCount, 7, 1);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other_seed);
  EXPECT_NE(first, other_stream);
  double sum = 0.0;
  float lo = 1.0f, hi = -1.0f;
  for (float v : first) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // Uniform on [-1, 1): mean ~0 (std of the mean ~0.0018), range ~full.
  EXPECT_LT(std::fabs(sum / kCount), 0.01);
  EXPECT_LT(lo, -0.999f);
  EXPECT_GT(hi, 0.999f);
}

TEST(ToleranceTest, GrowsWithSqrtOfReductionLengthAndScalesWithOutput) {
  const Tolerance small = ToleranceFor(1, 1.0);
  EXPECT_DOUBLE_EQ(small.rtol, 8 * FLT_EPSILON * 8);  // the K >= 64 floor
  EXPECT_DOUBLE_EQ(ToleranceFor(64, 1.0).rtol, small.rtol);
  EXPECT_DOUBLE_EQ(ToleranceFor(4096, 1.0).rtol, 8 * FLT_EPSILON * 64);
  EXPECT_DOUBLE_EQ(ToleranceFor(4096, 10.0).atol, 10.0 * 8 * FLT_EPSILON * 64);
}

// One cap on a measurement's tensors, sandbox or not: refused before a byte
// is allocated (here 3 x 2^40 floats, twice).
TEST(PreparedWorkloadCacheTest, TensorsOverTheCapAreRefusedBeforeAllocation) {
  PreparedWorkloadCache cache;
  absl::StatusOr<PreparedWorkload*> huge =
      cache.Get("dense", R"({"M": 1048576, "N": 1048576, "K": 1048576})", 1);
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(huge.status().message(), ::testing::HasSubstr("cap of"));
  // Dimensions whose product wraps int64 are refused too, not taken as small.
  absl::StatusOr<PreparedWorkload*> wrapping = cache.Get(
      "conv2d",
      R"({"N": 1048576, "C": 1048576, "H": 1048576, "W": 1048576, "K": 1, "R": 1, "S": 1})", 1);
  EXPECT_EQ(wrapping.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.Get("dense", R"({"M": 4, "N": 4, "K": 4})", 1).ok());
}

TEST(PreparedWorkloadTest, NaiveFp32KernelsPassAcrossReductionLengths) {
  for (int64_t k : {1, 3, 64, 1000, 4096}) {
    auto prepared = Prepare(8, 24, k, /*seed=*/k);
    prepared->PrepareCheckRun();
    NaiveFp32Dense(*prepared);
    EXPECT_EQ(prepared->FindWrongAnswer(), std::nullopt) << "K = " << k;
  }
}

TEST(PreparedWorkloadTest, DroppingOneProductIsCaughtAndLocated) {
  auto prepared = Prepare(8, 24, 1024);
  prepared->PrepareCheckRun();
  NaiveFp32Dense(*prepared, /*row=*/5, /*col=*/17, /*k=*/300);
  std::optional<std::string> wrong = prepared->FindWrongAnswer();
  ASSERT_TRUE(wrong.has_value());
  EXPECT_THAT(*wrong, HasSubstr("output C [8, 24] mismatches the reference at index 137 [5, 17]"));
  EXPECT_THAT(*wrong, HasSubstr("1 of 192 elements mismatch"));
}

TEST(PreparedWorkloadTest, KernelThatWritesNothingFailsOnThePoison) {
  auto prepared = Prepare(4, 4, 4);
  // An earlier, correct run leaves right answers in C ...
  prepared->PrepareCheckRun();
  NaiveFp32Dense(*prepared);
  ASSERT_EQ(prepared->FindWrongAnswer(), std::nullopt);
  // ... which must not let a kernel that does nothing pass.
  prepared->PrepareCheckRun();
  std::optional<std::string> wrong = prepared->FindWrongAnswer();
  ASSERT_TRUE(wrong.has_value());
  EXPECT_THAT(*wrong, HasSubstr("at index 0 [0, 0]: got nan"));
  EXPECT_THAT(*wrong, HasSubstr("16 of 16 elements mismatch (16 of them NaN)"));
}

TEST(PreparedWorkloadTest, NanInOneElementIsWrong) {
  auto prepared = Prepare(4, 4, 4);
  prepared->PrepareCheckRun();
  NaiveFp32Dense(*prepared);
  prepared->buffer(2)[6] = std::numeric_limits<float>::quiet_NaN();
  std::optional<std::string> wrong = prepared->FindWrongAnswer();
  ASSERT_TRUE(wrong.has_value());
  EXPECT_THAT(*wrong, HasSubstr("at index 6 [1, 2]: got nan"));
}

TEST(PreparedWorkloadTest, WritingAnInputIsWrongAndIsUndoneForTheNextKernel) {
  auto prepared = Prepare(4, 4, 4);
  const float original = prepared->buffer(1)[5];
  prepared->PrepareCheckRun();
  NaiveFp32Dense(*prepared);
  prepared->buffer(1)[5] = 42.0f;  // B, flat index 5
  std::optional<std::string> wrong = prepared->FindWrongAnswer();
  ASSERT_TRUE(wrong.has_value());
  EXPECT_THAT(*wrong, HasSubstr("kernel wrote into input B [4, 4] at index 5 [1, 1]"));

  prepared->PrepareCheckRun();
  EXPECT_EQ(prepared->buffer(1)[5], original);
  NaiveFp32Dense(*prepared);
  EXPECT_EQ(prepared->FindWrongAnswer(), std::nullopt);
}

TEST(PreparedWorkloadTest, BuffersAreAlignedAndInKernelArgumentOrder) {
  auto prepared = Prepare(3, 5, 7);
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(prepared->kernel_args()[t], prepared->buffer(t));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(prepared->buffer(t)) % 64, 0u);
  }
  // The cache flush evicts B (the weights), not A (the activation a model
  // has just written) nor the output.
  std::vector<CacheFlushRange> flushed = prepared->FlushedInputRanges();
  ASSERT_EQ(flushed.size(), 1u);
  EXPECT_EQ(flushed[0].data, prepared->buffer(1));
  EXPECT_EQ(flushed[0].bytes, 5 * 7 * sizeof(float));
}

TEST(PreparedWorkloadTest, SameSeedSameInputs) {
  auto first = Prepare(4, 4, 4, /*seed=*/3);
  auto second = Prepare(4, 4, 4, /*seed=*/3);
  auto other = Prepare(4, 4, 4, /*seed=*/4);
  EXPECT_EQ(std::memcmp(first->buffer(0), second->buffer(0), 16 * sizeof(float)), 0);
  EXPECT_NE(std::memcmp(first->buffer(0), other->buffer(0), 16 * sizeof(float)), 0);
  // A and B of one workload differ too (separate streams).
  EXPECT_NE(std::memcmp(first->buffer(0), first->buffer(1), 16 * sizeof(float)), 0);
}

TEST(PreparedWorkloadCacheTest, HitsByCanonicalArgsAndSeed) {
  PreparedWorkloadCache cache(4);
  auto first = cache.Get("dense", R"({"M": 4, "N": 4, "K": 4})", 1);
  ASSERT_TRUE(first.ok()) << first.status();
  // Same workload spelled with the default layout and other key order.
  auto same = cache.Get("dense", R"({"layout": "NK", "K": 4, "N": 4, "M": 4})", 1);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(*first, *same);
  auto other_seed = cache.Get("dense", R"({"M": 4, "N": 4, "K": 4})", 2);
  ASSERT_TRUE(other_seed.ok());
  EXPECT_NE(*first, *other_seed);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(PreparedWorkloadCacheTest, EvictsLeastRecentlyUsed) {
  PreparedWorkloadCache cache(2);
  auto a = cache.Get("dense", R"({"M": 1, "N": 1, "K": 1})", 1);
  auto b = cache.Get("dense", R"({"M": 2, "N": 2, "K": 2})", 1);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(cache.Get("dense", R"({"M": 1, "N": 1, "K": 1})", 1).ok());  // a is now newest
  ASSERT_TRUE(cache.Get("dense", R"({"M": 3, "N": 3, "K": 3})", 1).ok());  // evicts b
  EXPECT_EQ(cache.size(), 2u);
  auto a_again = cache.Get("dense", R"({"M": 1, "N": 1, "K": 1})", 1);
  ASSERT_TRUE(a_again.ok());
  EXPECT_EQ(*a_again, *a);  // still cached: same object
}

TEST(PreparedWorkloadCacheTest, KeepsWithinItsByteBudgetButAlwaysTheEntryInUse) {
  // dense 64^3: A, B, C of 16 KiB each, two buffers per tensor = 96 KiB.
  const int64_t one = 6 * 64 * 64 * 4;
  PreparedWorkloadCache cache(/*capacity=*/64, /*max_bytes=*/2 * one);
  auto a = cache.Get("dense", R"({"M": 64, "N": 64, "K": 64})", 1);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->bytes(), one);
  ASSERT_TRUE(cache.Get("dense", R"({"M": 64, "N": 64, "K": 64})", 2).ok());
  EXPECT_EQ(cache.bytes(), 2 * one);
  ASSERT_TRUE(cache.Get("dense", R"({"M": 64, "N": 64, "K": 64})", 3).ok());  // evicts seed 1
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_LE(cache.bytes(), 2 * one);
  // Larger than the whole budget: kept alone, as it is in use.
  auto big = cache.Get("dense", R"({"M": 256, "N": 256, "K": 256})", 1);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(cache.size(), 1u);
}

TEST(PreparedWorkloadCacheTest, BadRequestsAreInvalidArgument) {
  PreparedWorkloadCache cache;
  auto not_json = cache.Get("dense", "{M: 4", 1);
  EXPECT_EQ(not_json.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(not_json.status().message(), HasSubstr("not valid JSON"));
  auto unknown = cache.Get("no_such_op", "{}", 1);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown workload \"no_such_op\""));
  auto bad_arg = cache.Get("dense", R"({"M": 0, "N": 4, "K": 4})", 1);
  EXPECT_EQ(bad_arg.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace tunefleet
