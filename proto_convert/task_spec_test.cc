#include "proto_convert/task_spec.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

proto::TaskSpec DenseSpec(const std::string& target) {
  return MakeTaskSpec("", "dense", {{"M", 16}, {"N", 16}, {"K", 16}}, target);
}

TEST(TaskSpecTest, MakesTheTaskTheSpecDescribes) {
  absl::StatusOr<std::unique_ptr<Task>> task = TaskFromSpec(DenseSpec("llvm -mcpu=native"));
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ((*task)->workload().name(), "dense");
  EXPECT_EQ((*task)->target(), "llvm -mcpu=native");
  EXPECT_GT((*task)->space().size(), 0);
}

TEST(TaskSpecTest, MakeTaskSpecWritesEveryField) {
  proto::TaskSpec spec = MakeTaskSpec("dense_tiled", "dense", {{"M", 8}}, "llvm");
  EXPECT_EQ(spec.template_name(), "dense_tiled");
  EXPECT_EQ(spec.workload_name(), "dense");
  EXPECT_EQ(nlohmann::json::parse(spec.workload_args_json()), nlohmann::json({{"M", 8}}));
  EXPECT_EQ(spec.target(), "llvm");
}

TEST(TaskSpecTest, TvmAttributesAreAcceptedLikeEverywhereElse) {
  absl::StatusOr<std::unique_ptr<Task>> task =
      TaskFromSpec(DenseSpec("llvm -mcpu=native -keys=cpu -device=host -num-cores=2"));
  EXPECT_TRUE(task.ok()) << task.status();
}

TEST(TaskSpecTest, CudaTargetPicksAGpuTemplate) {
  absl::StatusOr<std::unique_ptr<Task>> task = TaskFromSpec(DenseSpec("cuda -mcpu=sm_90"));
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_TRUE((*task)->tmpl().is_gpu());
}

TEST(TaskSpecTest, BadSpecsAreInvalidArgumentNamingTheField) {
  proto::TaskSpec bad_json = DenseSpec("llvm");
  bad_json.set_workload_args_json("{\"M\": 16,");
  absl::StatusOr<std::unique_ptr<Task>> task = TaskFromSpec(bad_json);
  EXPECT_EQ(task.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(task.status().message(), HasSubstr("workload_args_json is not valid JSON"));

  proto::TaskSpec not_an_object = DenseSpec("llvm");
  not_an_object.set_workload_args_json("[16, 16, 16]");
  EXPECT_THAT(TaskFromSpec(not_an_object).status().message(),
              HasSubstr("workload_args_json is not a JSON object"));

  EXPECT_THAT(TaskFromSpec(DenseSpec("llvm -O3")).status().message(),
              HasSubstr("unknown option \"-O3\""));
  EXPECT_THAT(TaskFromSpec(DenseSpec("opencl")).status().message(),
              HasSubstr("unsupported target"));

  proto::TaskSpec unknown_workload = DenseSpec("llvm");
  unknown_workload.set_workload_name("no_such_workload");
  EXPECT_THAT(TaskFromSpec(unknown_workload).status().message(), HasSubstr("no_such_workload"));
}

}  // namespace
}  // namespace tunefleet
