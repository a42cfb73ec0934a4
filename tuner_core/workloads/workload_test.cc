#include "tuner_core/workloads/workload.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(WorkloadRegistryTest, MakeWorkloadFindsEveryRegisteredName) {
  const std::vector<std::string> names = WorkloadNames();
  EXPECT_EQ(names, (std::vector<std::string>{"batch_matmul", "conv2d_nchw", "dense",
                                             "depthwise_conv2d_nchw"}));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const std::pair<std::string, nlohmann::json> examples[] = {
      {"batch_matmul", {{"B", 2}, {"M", 4}, {"N", 4}, {"K", 4}}},
      {"conv2d_nchw", {{"N", 1}, {"C", 3}, {"H", 8}, {"W", 8}, {"K", 4}, {"R", 3}, {"S", 3}}},
      {"dense", {{"M", 4}, {"N", 4}, {"K", 4}}},
      {"depthwise_conv2d_nchw", {{"N", 1}, {"C", 3}, {"H", 8}, {"W", 8}, {"R", 3}, {"S", 3}}},
  };
  for (const auto& [name, args] : examples) {
    auto w = MakeWorkload(name, args);
    ASSERT_TRUE(w.ok()) << name << ": " << w.status();
    EXPECT_EQ((*w)->name(), name);
    EXPECT_GT((*w)->flops(), 0);
    EXPECT_TRUE((*w)->tensors().back().is_output) << name;
    // The canonical args make the same workload again.
    auto again = MakeWorkload(name, (*w)->args());
    ASSERT_TRUE(again.ok()) << name << ": " << again.status();
    EXPECT_EQ((*again)->Describe(), (*w)->Describe());
  }
}

TEST(WorkloadRegistryTest, UnknownNameListsTheKnownOnes) {
  auto w = MakeWorkload("conv3d", {{"N", 1}});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(w.status().message(),
            "unknown workload \"conv3d\" (known: batch_matmul, conv2d_nchw, dense, "
            "depthwise_conv2d_nchw)");
}

TEST(WorkloadArgsFromShapeTest, DenseAndBatchMatmul) {
  auto dense = WorkloadArgsFromShape("dense", "3,4,5", "KN");
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ(*dense, nlohmann::json({{"M", 3}, {"N", 4}, {"K", 5}, {"layout", "KN"}}));
  auto bmm = WorkloadArgsFromShape("batch_matmul", "12,128,128,64", "NK");
  ASSERT_TRUE(bmm.ok()) << bmm.status();
  EXPECT_EQ(*bmm, nlohmann::json({{"B", 12}, {"M", 128}, {"N", 128}, {"K", 64}, {"layout", "NK"}}));
  EXPECT_NE(
      WorkloadArgsFromShape("batch_matmul", "12,128,64", "NK").status().message().find("B,M,N,K"),
      std::string::npos);
  EXPECT_NE(WorkloadArgsFromShape("dense", "12,x,4", "NK")
                .status()
                .message()
                .find("\"x\" is not an integer"),
            std::string::npos);
  // A workload without shape keys takes --args; an unknown one is named.
  const std::string conv =
      std::string(WorkloadArgsFromShape("conv2d_nchw", "1,2,3", "NK").status().message());
  EXPECT_NE(conv.find("--args"), std::string::npos) << conv;
  EXPECT_NE(conv.find("dense (M,N,K)"), std::string::npos) << conv;
  EXPECT_NE(WorkloadArgsFromShape("conv3d", "1", "NK").status().message().find("known: "),
            std::string::npos);
}

// Each registered workload's shape keys make args its Make accepts.
TEST(WorkloadArgsFromShapeTest, EveryShapeKeyListMakesAWorkload) {
  for (const WorkloadKind& kind : WorkloadKinds()) {
    if (kind.shape_keys.empty()) continue;
    std::vector<std::string> sizes(kind.shape_keys.size(), "8");
    auto args = WorkloadArgsFromShape(kind.name, absl::StrJoin(sizes, ","), "NK");
    ASSERT_TRUE(args.ok()) << kind.name << ": " << args.status();
    EXPECT_TRUE(MakeWorkload(kind.name, *args).ok()) << kind.name;
  }
}

}  // namespace
}  // namespace tunefleet
