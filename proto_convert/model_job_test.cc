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

// Under a time budget with no per-task cap the budget ends the search: a
// 20-minute budget once stopped at 500 trials per task after 12 minutes.
TEST(ModelJobTest, UnderATimeBudgetWithoutACapTheBudgetEndsTheSearch) {
  std::vector<ModelTask> tasks = ModelTasks("resnet-18").value();
  proto::JobSpec spec =
      MakeModelJobSpec("resnet-18", tasks, "llvm", {.trials_per_task = 0, .time_budget_s = 1200});
  EXPECT_EQ(spec.n_trial(), kModelTrialsUnderBudget);
  EXPECT_FALSE(spec.has_trials_per_task());
  EXPECT_EQ(spec.time_budget_s(), 1200);
  // Policies that count per task keep the default cap.
  spec =
      MakeModelJobSpec("resnet-18", tasks, "llvm",
                       {.trials_per_task = 0, .task_policy = "round_robin", .time_budget_s = 1200});
  EXPECT_EQ(spec.trials_per_task(), kDefaultModelTrialsPerTask);
  // A cap given with the budget still holds.
  spec =
      MakeModelJobSpec("resnet-18", tasks, "llvm", {.trials_per_task = 30, .time_budget_s = 1200});
  EXPECT_EQ(spec.n_trial(), 30 * spec.tasks_size());
}

TEST(ModelJobTest, SpecSpendsTheBudgetByThePolicy) {
  std::vector<ModelTask> tasks = ModelTasks("resnet-18").value();
  proto::JobSpec gradient = MakeModelJobSpec("resnet-18", tasks, "llvm", {.trials_per_task = 8});
  EXPECT_EQ(gradient.model(), "resnet-18");
  EXPECT_EQ(gradient.tasks_size(), static_cast<int>(tasks.size()));
  EXPECT_EQ(gradient.n_trial(), 8 * gradient.tasks_size());
  EXPECT_EQ(gradient.task_policy(), "gradient");
  EXPECT_FALSE(gradient.has_trials_per_task()) << "the gradient policy splits the budget";
  proto::JobSpec sequential = MakeModelJobSpec("resnet-18", tasks, "llvm",
                                               {.trials_per_task = 8, .task_policy = "sequential"});
  EXPECT_EQ(sequential.trials_per_task(), 8);
  proto::JobSpec selective =
      MakeModelJobSpec("resnet-18", tasks, "llvm", {.trials_per_task = 8, .selective = "top3"});
  EXPECT_EQ(selective.trials_per_task(), 8);
  EXPECT_EQ(selective.selective(), "top3");
  EXPECT_DOUBLE_EQ(selective.selective_threshold(), 0.01);
}

}  // namespace
}  // namespace tunefleet
