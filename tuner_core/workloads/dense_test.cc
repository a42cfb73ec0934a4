#include "tuner_core/workloads/dense.h"

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(DenseWorkloadTest, FlopsAndTensorsFollowTheShape) {
  auto w = MakeWorkload("dense", {{"M", 16}, {"N", 1024}, {"K", 512}});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_DOUBLE_EQ((*w)->flops(), 2.0 * 16 * 1024 * 512);
  ASSERT_EQ((*w)->tensors().size(), 3u);
  EXPECT_EQ((*w)->tensors()[1].shape, (std::vector<int64_t>{1024, 512}));  // B is [N, K]
  EXPECT_TRUE((*w)->tensors()[2].is_output);
  EXPECT_EQ((*w)->args()["layout"], "NK");
  EXPECT_EQ((*w)->Describe(), "dense(K=512,M=16,N=1024,layout=NK)");
}

TEST(DenseWorkloadTest, ReferenceComputesBothLayouts) {
  // A = [[1, 2]], B(NK) = [[3, 4], [5, 6]] -> C = [[11, 17]].
  std::vector<float> a = {1, 2}, b_nk = {3, 4, 5, 6}, b_kn = {3, 5, 4, 6}, c(2);
  auto nk = MakeWorkload("dense", {{"M", 1}, {"N", 2}, {"K", 2}});
  ASSERT_TRUE(nk.ok());
  (*nk)->ComputeReference({a.data(), b_nk.data(), c.data()});
  EXPECT_EQ(c, (std::vector<float>{11, 17}));
  auto kn = MakeWorkload("dense", {{"M", 1}, {"N", 2}, {"K", 2}, {"layout", "KN"}});
  ASSERT_TRUE(kn.ok());
  (*kn)->ComputeReference({a.data(), b_kn.data(), c.data()});
  EXPECT_EQ(c, (std::vector<float>{11, 17}));
}

TEST(DenseWorkloadTest, BadArgumentsAreInvalidArgumentNamingTheProblem) {
  struct Case {
    nlohmann::json args;
    const char* expected;
  } cases[] = {
      {{{"M", 4}, {"N", 4}}, "missing argument \"K\""},
      {{{"M", 4}, {"N", 4}, {"K", -1}}, "\"K\" = -1"},
      {{{"M", 4}, {"N", 4}, {"K", 4}, {"Q", 1}}, "unknown argument \"Q\""},
      {{{"M", 4}, {"N", "x"}, {"K", 4}}, "\"N\" must be an integer"},
      {{{"M", 4}, {"N", 4}, {"K", 4}, {"layout", "MN"}}, "layout"},
      {nlohmann::json::array(), "must be a JSON object"},
  };
  for (const Case& c : cases) {
    auto w = MakeWorkload("dense", c.args);
    ASSERT_FALSE(w.ok()) << c.args.dump();
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().message().find(c.expected), std::string::npos) << w.status();
  }
  auto unknown = MakeWorkload("softmax", {});
  EXPECT_NE(unknown.status().message().find("unknown workload \"softmax\""), std::string::npos);
}

}  // namespace
}  // namespace tunefleet
