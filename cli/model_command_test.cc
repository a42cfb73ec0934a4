// Whole-model tuning end to end: every task of ResNet-18 built and measured
// (two trials each), one records file, a progress line per task.
#include "cli/model_command.h"

#include <cstdlib>
#include <set>
#include <sstream>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "local/local_mode_test_util.h"
#include "tuner_core/records/record_file.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

TEST(ModelCommandTest, TasksListsResNet18) {
  std::ostringstream out;
  ASSERT_TRUE(RunTasks("resnet-18", {}, out).ok());
  EXPECT_THAT(out.str(), HasSubstr("resnet-18: 12 tuning tasks for 21 layers"));
  EXPECT_THAT(out.str(), HasSubstr("25.5%  conv2d_nchw(C=64,H=56,K=64"));
  EXPECT_THAT(out.str(), HasSubstr("dense(K=512,M=1,N=1000"));
  std::ostringstream unknown;
  absl::Status status = RunTasks("resnet-19", {}, unknown);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("resnet-18"));
}

TEST(ModelCommandTest, TunesEveryTaskOfResNet18IntoOneLog) {
  ASSERT_TRUE(UseTestRunner());
  TuneCommandOptions base;
  base.trials = 2;
  base.batch_size = 2;
  base.tuner = "random";
  base.seed = 3;
  base.log = std::string(std::getenv("TEST_TMPDIR")) + "/resnet18.jsonl";
  base.local.runner.num_threads = 2;
  base.local.measure.number = 1;
  base.local.measure.repeat = 1;
  base.local.measure.cooldown_interval_s = 0;
  std::ostringstream progress, out;
  absl::StatusOr<ModelTuneSummary> summary = RunTuneModel("resnet-18", {}, base, progress, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->tasks.size(), 12u);
  for (int i = 1; i <= 12; ++i) {
    EXPECT_THAT(progress.str(), HasSubstr(absl::StrFormat("[Task %2d/12]  Current/Best:", i)));
  }
  EXPECT_THAT(out.str(), HasSubstr("Model latency (sum of tuned layers' best):"));
  EXPECT_THAT(out.str(), HasSubstr("| build "));
  // The summed latency is the tasks' best costs weighted by layer counts.
  double expected = 0;
  int layers = 0;
  for (const ModelTaskResult& t : summary->tasks) {
    if (t.summary.best_gflops > 0) expected += t.summary.best_cost_seconds * t.num_layers;
    layers += t.num_layers;
  }
  EXPECT_EQ(layers, 21);
  EXPECT_DOUBLE_EQ(summary->model_latency_seconds, expected);
  EXPECT_GT(summary->model_latency_seconds, 0);

  absl::StatusOr<ReadReport> records = ReadRecords(base.log);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->records.size(), 24u);
  std::set<std::string> tasks;
  for (const Record& r : records->records) tasks.insert(r.task_name + r.workload_args.dump());
  EXPECT_EQ(tasks.size(), 12u);
}

}  // namespace
}  // namespace tunefleet
