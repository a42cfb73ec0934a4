#include "tuner_core/workloads/workload.h"

#include <algorithm>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace tunefleet
