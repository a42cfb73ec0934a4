#include "tuner_core/workloads/batch_matmul.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tuner_core/workloads/workload_test_util.h"

namespace tunefleet {
namespace {

using nlohmann::json;

using workload_test::BadArgsCase;
using workload_test::With;
using workload_test::Without;

json Base() { return {{"B", 2}, {"M", 3}, {"N", 4}, {"K", 5}}; }

std::unique_ptr<BatchMatmulWorkload> MakeOk(const json& args) {
  return workload_test::MakeOk<BatchMatmulWorkload>(args);
}

TEST(BatchMatmulWorkloadTest, CanonicalArgsAndAccessors) {
  auto w = MakeOk(Base());
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->args(), json({{"B", 2}, {"M", 3}, {"N", 4}, {"K", 5}, {"layout", "NK"}}));
  EXPECT_EQ(w->name(), "batch_matmul");
  EXPECT_EQ(w->Describe(), "batch_matmul(B=2,K=5,M=3,N=4,layout=NK)");
  EXPECT_EQ(w->batch(), 2);
  EXPECT_EQ(w->m(), 3);
  EXPECT_EQ(w->n(), 4);
  EXPECT_EQ(w->k(), 5);
  EXPECT_EQ(w->layout(), BatchMatmulWorkload::Layout::kNK);
  auto kn = MakeOk(With(Base(), {{"layout", "KN"}}));
  ASSERT_NE(kn, nullptr);
  EXPECT_EQ(kn->layout(), BatchMatmulWorkload::Layout::kKN);
  EXPECT_EQ(kn->args()["layout"], "KN");
  auto again = MakeOk(kn->args());
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->args(), kn->args());
}

TEST(BatchMatmulWorkloadTest, TensorsFollowTheLayout) {
  auto nk = MakeOk(Base());
  ASSERT_NE(nk, nullptr);
  ASSERT_EQ(nk->tensors().size(), 3u);
  EXPECT_EQ(nk->tensors()[0].name, "A");
  EXPECT_EQ(nk->tensors()[0].shape, (std::vector<int64_t>{2, 3, 5}));
  EXPECT_EQ(nk->tensors()[1].name, "B");
  EXPECT_EQ(nk->tensors()[1].shape, (std::vector<int64_t>{2, 4, 5}));
  EXPECT_FALSE(nk->tensors()[1].is_output);
  EXPECT_EQ(nk->tensors()[2].name, "C");
  EXPECT_EQ(nk->tensors()[2].shape, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(nk->tensors()[2].is_output);
  auto kn = MakeOk(With(Base(), {{"layout", "KN"}}));
  ASSERT_NE(kn, nullptr);
  EXPECT_EQ(kn->tensors()[1].shape, (std::vector<int64_t>{2, 5, 4}));
  EXPECT_EQ(kn->tensors()[2].shape, (std::vector<int64_t>{2, 3, 4}));
}

TEST(BatchMatmulWorkloadTest, FlopsAreExact) {
  // BERT-base attention scores: 12 heads x batch 8, 128x128, head size 64.
  auto w = MakeOk({{"B", 96}, {"M", 128}, {"N", 128}, {"K", 64}});
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->flops(), 201326592.0);  // 2*96*128*128*64
  EXPECT_EQ(w->ReductionLength(), 64);
  auto odd = MakeOk({{"B", 3}, {"M", 7}, {"N", 1}, {"K", 13}, {"layout", "KN"}});
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->flops(), 546.0);
  EXPECT_EQ(odd->ReductionLength(), 13);
}

TEST(BatchMatmulWorkloadTest, BadArgumentsAreInvalidArgumentNamingTheKey) {
  const int64_t big = int64_t{1} << 20;
  const BadArgsCase cases[] = {
      {Without(Base(), "B"), "missing argument \"B\""},
      {With(Base(), {{"M", 0}}), "argument \"M\" = 0 is outside [1, 1048576]"},
      {With(Base(), {{"N", big + 1}}), "argument \"N\" = 1048577 is outside"},
      {With(Base(), {{"K", 2.5}}), "argument \"K\" must be an integer, got 2.5"},
      {With(Base(), {{"layout", "TN"}}),
       "argument \"layout\" must be \"NK\" or \"KN\", got \"TN\""},
      {With(Base(), {{"layout", 1}}), "argument \"layout\" must be \"NK\" or \"KN\", got 1"},
      {With(Base(), {{"transpose_b", true}}),
       "unknown argument \"transpose_b\" (accepted: B, M, N, K, layout)"},
      {With(Base(), {{"B", big}, {"M", big}, {"K", big}}),
       "tensor \"A\" of shape [1048576,1048576,1048576] has more than 1099511627776 elements"},
      {json(3), "arguments must be a JSON object"},
  };
  workload_test::ExpectBadArgsNameTheKey("batch_matmul", cases);
}

TEST(BatchMatmulWorkloadTest, ReferenceMatchesHandComputedValues) {
  // Batch 0: A = [[1, 2]], B(NK) = [[3, 4], [5, 6]] -> [[11, 17]].
  // Batch 1: A = [[-1, 1]], B(NK) = [[1, 1], [2, 5]] -> [[0, 3]].
  std::vector<float> a = {1, 2, -1, 1};
  std::vector<float> b_nk = {3, 4, 5, 6, 1, 1, 2, 5};
  std::vector<float> b_kn = {3, 5, 4, 6, 1, 2, 1, 5};
  std::vector<float> c(4, -1);
  auto nk = MakeOk({{"B", 2}, {"M", 1}, {"N", 2}, {"K", 2}});
  ASSERT_NE(nk, nullptr);
  nk->ComputeReference({a.data(), b_nk.data(), c.data()});
  EXPECT_EQ(c, (std::vector<float>{11, 17, 0, 3}));
  std::fill(c.begin(), c.end(), -1);
  auto kn = MakeOk({{"B", 2}, {"M", 1}, {"N", 2}, {"K", 2}, {"layout", "KN"}});
  ASSERT_NE(kn, nullptr);
  kn->ComputeReference({a.data(), b_kn.data(), c.data()});
  EXPECT_EQ(c, (std::vector<float>{11, 17, 0, 3}));
}

TEST(BatchMatmulWorkloadTest, ReferenceMatchesBruteForce) {
  struct Shape {
    int64_t batch, m, n, k;
  } shapes[] = {{1, 1, 1, 1}, {3, 7, 5, 9}, {2, 17, 1, 33}, {4, 1, 19, 6}, {5, 12, 13, 64}};
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Shape& s : shapes) {
    for (const char* layout : {"NK", "KN"}) {
      const json args = {{"B", s.batch}, {"M", s.m}, {"N", s.n}, {"K", s.k}, {"layout", layout}};
      auto w = MakeOk(args);
      ASSERT_NE(w, nullptr);
      const bool nk = std::string(layout) == "NK";
      std::vector<float> a(s.batch * s.m * s.k), b(s.batch * s.k * s.n),
          c(s.batch * s.m * s.n, NAN);
      for (float& x : a) x = dist(rng);
      for (float& x : b) x = dist(rng);
      w->ComputeReference({a.data(), b.data(), c.data()});
      for (int64_t bi = 0; bi < s.batch; ++bi) {
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t j = 0; j < s.n; ++j) {
            double want = 0;
            for (int64_t kk = 0; kk < s.k; ++kk) {
              const float b_val = nk ? b[(bi * s.n + j) * s.k + kk] : b[(bi * s.k + kk) * s.n + j];
              want += static_cast<double>(a[(bi * s.m + i) * s.k + kk]) * b_val;
            }
            EXPECT_NEAR(c[(bi * s.m + i) * s.n + j], want, 1e-5 * (1 + std::fabs(want)))
                << args.dump() << " at " << bi << "," << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(BatchMatmulWorkloadTest, FromAcceptsOnlyBatchMatmul) {
  auto bmm = MakeWorkload("batch_matmul", Base());
  ASSERT_TRUE(bmm.ok()) << bmm.status();
  auto dense = MakeWorkload("dense", {{"M", 3}, {"N", 4}, {"K", 5}});
  ASSERT_TRUE(dense.ok());
  const BatchMatmulWorkload* as_bmm =
      workload_test::ExpectFromAcceptsOnly<BatchMatmulWorkload>(**bmm, **dense, "bmm_template");
  ASSERT_NE(as_bmm, nullptr);
  EXPECT_EQ(as_bmm->batch(), 2);
}

}  // namespace
}  // namespace tunefleet
