#include "tuner_core/pretuned/pretuned_records.h"

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tuner_core/records/record.h"
#include "tuner_core/selective/similarity.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Task> DenseTask(int m, int n, int k) {
  absl::StatusOr<std::unique_ptr<Task>> task = Task::Make(
      "dense_gemm.x86", "dense", {{"M", m}, {"N", n}, {"K", k}, {"layout", "NK"}}, "llvm");
  EXPECT_TRUE(task.ok()) << task.status();
  return std::move(task).value();
}

std::string Line(const Task& task, int64_t index, double cost, bool failed = false) {
  Record record;
  record.target = "llvm -mcpu=znver4";
  record.task_name = task.name();
  record.workload_name = task.workload().name();
  record.workload_args = task.workload().args();
  record.config = task.space().Get(index)->ToJson();
  record.result.costs = {cost};
  if (failed) record.result.error_no = MeasureErrorNo::kRuntimeDevice;
  return record.ToLine() + "\n";
}

std::vector<int64_t> Indices(const std::vector<Config>& configs) {
  std::vector<int64_t> indices;
  for (const Config& c : configs) indices.push_back(c.index());
  return indices;
}

TEST(PretunedRecordsTest, ATasksOwnRecordsComeFastestFirst) {
  std::unique_ptr<Task> task = DenseTask(64, 256, 128);
  absl::StatusOr<PretunedRecords> records =
      PretunedRecords::Parse(Line(*task, 5, 3e-3) + Line(*task, 7, 1e-3) + Line(*task, 9, 2e-3) +
                                 Line(*task, 11, 0.5e-3, /*failed=*/true),
                             "test");
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->num_records(), 3);  // the failed trial is no candidate
  EXPECT_EQ(records->num_workloads(), 1);
  EXPECT_EQ(Indices(records->ConfigsFor(*task, 2)), (std::vector<int64_t>{7, 9}));
  EXPECT_EQ(Indices(records->ConfigsFor(*task, 5)), (std::vector<int64_t>{7, 9, 5}));
  EXPECT_TRUE(records->ConfigsFor(*task, 0).empty());
}

TEST(PretunedRecordsTest, AnUnseenShapeTakesTheNearestShapesConfigsCarriedToItsSpace) {
  std::unique_ptr<Task> near = DenseTask(64, 256, 128);
  std::unique_ptr<Task> far = DenseTask(1024, 1024, 1024);
  const int64_t near_best = near->space().size() / 3;
  absl::StatusOr<PretunedRecords> records = PretunedRecords::Parse(
      Line(*near, near_best, 1e-3) + Line(*far, far->space().size() / 2, 1e-3), "test");
  ASSERT_TRUE(records.ok()) << records.status();
  std::unique_ptr<Task> unseen = DenseTask(48, 256, 96);
  std::vector<Config> configs = records->ConfigsFor(*unseen, 3);
  ASSERT_EQ(configs.size(), 1u);
  const Config expected = MapConfigNearest(*near->space().Get(near_best), unseen->space());
  EXPECT_EQ(configs[0].index(), expected.index());
  EXPECT_TRUE(unseen->space().Get(configs[0].index()).ok());
}

TEST(PretunedRecordsTest, OtherTemplatesAndLayoutsGiveNothing) {
  std::unique_ptr<Task> task = DenseTask(64, 256, 128);
  absl::StatusOr<PretunedRecords> records = PretunedRecords::Parse(Line(*task, 3, 1e-3), "test");
  ASSERT_TRUE(records.ok());
  absl::StatusOr<std::unique_ptr<Task>> other_template = Task::Make(
      "dense_pack.x86", "dense", {{"M", 64}, {"N", 256}, {"K", 128}, {"layout", "NK"}}, "llvm");
  ASSERT_TRUE(other_template.ok()) << other_template.status();
  EXPECT_TRUE(records->ConfigsFor(**other_template, 3).empty());
  absl::StatusOr<std::unique_ptr<Task>> other_layout = Task::Make(
      "dense_gemm.x86", "dense", {{"M", 64}, {"N", 256}, {"K", 128}, {"layout", "KN"}}, "llvm");
  ASSERT_TRUE(other_layout.ok()) << other_layout.status();
  EXPECT_TRUE(records->ConfigsFor(**other_layout, 3).empty());
}

TEST(PretunedRecordsTest, AMalformedLineIsNamed) {
  std::unique_ptr<Task> task = DenseTask(64, 256, 128);
  absl::StatusOr<PretunedRecords> records =
      PretunedRecords::Parse(Line(*task, 3, 1e-3) + "{\"input\": 5}\n", "mine.jsonl");
  ASSERT_FALSE(records.ok());
  EXPECT_EQ(records.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(records.status().message(), HasSubstr("mine.jsonl line 2"));
}

TEST(PretunedRecordsTest, TheShippedRecordsParseAndCoverTheZoosTasks) {
  EXPECT_THAT(PretunedRecords::ShippedFamilies(), ::testing::Contains("x86_64-avx512"));
  absl::StatusOr<std::shared_ptr<const PretunedRecords>> shipped =
      PretunedRecords::Shipped("x86_64-avx512");
  ASSERT_TRUE(shipped.ok()) << shipped.status();
  EXPECT_GT((*shipped)->num_workloads(), 100);
  // ResNet-18's second stage 3x3 convolution.
  absl::StatusOr<std::unique_ptr<Task>> conv = Task::Make("conv2d_nchwc.x86", "conv2d_nchw",
                                                          {{"N", 1},
                                                           {"C", 128},
                                                           {"H", 28},
                                                           {"W", 28},
                                                           {"K", 128},
                                                           {"R", 3},
                                                           {"S", 3},
                                                           {"stride_h", 1},
                                                           {"stride_w", 1},
                                                           {"pad_top", 1},
                                                           {"pad_left", 1},
                                                           {"pad_bottom", 1},
                                                           {"pad_right", 1},
                                                           {"dil_h", 1},
                                                           {"dil_w", 1},
                                                           {"layout", "NCHWc"}},
                                                          "llvm -mcpu=znver4");
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_FALSE((*shipped)->ConfigsFor(**conv, 3).empty());
  // AVX2 (Zen 3 and the like) has its own records: AVX2 code, 8 lanes.
  absl::StatusOr<std::shared_ptr<const PretunedRecords>> avx2 =
      PretunedRecords::Shipped("x86_64-avx2");
  ASSERT_TRUE(avx2.ok()) << avx2.status();
  EXPECT_GT((*avx2)->num_records(), 1000);
  // A family the project has no records for starts cold.
  absl::StatusOr<std::shared_ptr<const PretunedRecords>> none =
      PretunedRecords::Shipped("riscv64-rvv");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->num_records(), 0);
}

}  // namespace
}  // namespace tunefleet
