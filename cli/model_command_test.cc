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

// Plain `tune --model`: the sequential policy, each task in turn.
TEST(ModelCommandTest, TunesEveryTaskOfResNet18IntoOneLogAndResumesFromIt) {
  ASSERT_TRUE(UseTestRunner());
  TuneCommandOptions base;
  base.trials = 2;
  base.batch_size = 2;
  base.tuner = "random";
  base.seed = 3;
  base.pretuned = "none";
  base.log = std::string(std::getenv("TEST_TMPDIR")) + "/resnet18.jsonl";
  base.local.runner.num_threads = 2;
  base.local.measure.number = 1;
  base.local.measure.repeat = 1;
  base.local.measure.cooldown_interval_s = 0;
  base.local.validation.top_k = 0;
  ModelJobOptions job;
  job.task_policy = "sequential";
  std::ostringstream progress, out;
  absl::StatusOr<LocalModelSummary> summary =
      RunTuneModelJob("resnet-18", {}, base, job, progress, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->trials_per_task.size(), 12u);
  EXPECT_EQ(summary->trials, 24);
  for (const int64_t n : summary->trials_per_task) EXPECT_EQ(n, 2);
  EXPECT_THAT(out.str(), HasSubstr("task policy sequential"));
  EXPECT_THAT(out.str(), HasSubstr("Estimated latency (sum of tuned tasks' best x layers):"));
  EXPECT_THAT(out.str(), HasSubstr("Time: build "));
  EXPECT_GT(summary->estimated_latency_s, 0);

  absl::StatusOr<ReadReport> records = ReadRecords(base.log);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->records.size(), 24u);
  std::set<std::string> tasks;
  for (const Record& r : records->records) tasks.insert(r.task_name + r.workload_args.dump());
  EXPECT_EQ(tasks.size(), 12u);

  // Run again on the same log: the job's 24 trials are done, nothing is
  // measured twice, and the estimate is the same records' (no validation).
  std::ostringstream progress2, out2;
  absl::StatusOr<LocalModelSummary> again =
      RunTuneModelJob("resnet-18", {}, base, job, progress2, out2);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->trials, 0);
  for (const int64_t n : again->resumed_per_task) EXPECT_EQ(n, 2);
  EXPECT_THAT(out2.str(), HasSubstr("24 trials already in"));
  EXPECT_DOUBLE_EQ(again->estimated_latency_s, summary->estimated_latency_s);
  EXPECT_EQ(ReadRecords(base.log)->records.size(), 24u);

  // A larger budget goes on from there: 1 more trial per task.
  base.trials = 3;
  std::ostringstream progress3, out3;
  absl::StatusOr<LocalModelSummary> more =
      RunTuneModelJob("resnet-18", {}, base, job, progress3, out3);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_EQ(more->trials, 12);
  EXPECT_EQ(ReadRecords(base.log)->records.size(), 36u);
  EXPECT_LE(more->estimated_latency_s, summary->estimated_latency_s * (1 + 1e-12));
}

}  // namespace
}  // namespace tunefleet
