#include "proto_convert/model_job.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto_convert/task_spec.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

TEST(ModelJobTest, OneWeightedTaskPerModelTaskThatLoads) {
  std::vector<ModelTask> tasks = ModelTasks("resnet-18").value();
  std::vector<proto::JobTask> job = ModelJobTasks(tasks, "llvm");
  ASSERT_EQ(job.size(), tasks.size());
  double layers = 0;
  for (size_t i = 0; i < job.size(); ++i) {
    EXPECT_EQ(job[i].weight(), tasks[i].num_layers);
    EXPECT_EQ(job[i].task().target(), "llvm");
    EXPECT_THAT(job[i].name(), HasSubstr(absl::StrCat(" x", tasks[i].num_layers)));
    EXPECT_TRUE(TaskFromSpec(job[i].task()).ok()) << job[i].name();
    layers += job[i].weight();
  }
  EXPECT_EQ(layers, 21);  // ResNet-18: 20 convolutions and the dense layer
}

}  // namespace
}  // namespace tunefleet
