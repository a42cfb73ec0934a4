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
#include "local/tune_command.h"
#include "toolchain/codegen/target.h"
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

// Plain `tune --model`: the sequential policy, each task in turn, through
// the same local job driver as a kernel's tune.
TEST(ModelCommandTest, TunesEveryTaskOfResNet18IntoOneLogAndResumesFromIt) {
  ASSERT_TRUE(UseTestRunner());
  ModelJobOptions job{.trials_per_task = 2, .task_policy = "sequential"};
  absl::StatusOr<proto::JobSpec> made = ModelJobSpec("resnet-18", {}, HostTargetString(), job);
  ASSERT_TRUE(made.ok()) << made.status();
  proto::JobSpec spec = *made;
  spec.set_tuner("random");
  spec.set_seed(3);
  spec.set_window(2);
  spec.mutable_measure()->set_number(1);
  spec.mutable_measure()->set_repeat(1);
  spec.mutable_measure()->set_cooldown_interval_s(0);
  spec.set_validate_top_k(0);
  LocalRunOptions run;
  run.log = std::string(std::getenv("TEST_TMPDIR")) + "/resnet18.jsonl";
  run.host.runner.num_threads = 2;
  std::ostringstream progress, out;
  absl::StatusOr<LocalJobSummary> summary = RunTune(spec, run, progress, out);
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_EQ(summary->tasks.size(), 12u);
  EXPECT_EQ(summary->trials, 24);
  for (const LocalTaskOutcome& t : summary->tasks) EXPECT_EQ(t.trials, 2);
  EXPECT_THAT(out.str(), HasSubstr("task policy sequential"));
  EXPECT_THAT(out.str(), HasSubstr("Cold start"));
  EXPECT_THAT(out.str(), HasSubstr("Estimated latency (sum of tuned tasks' best x layers):"));
  EXPECT_THAT(out.str(), HasSubstr("Time: build "));
  EXPECT_GT(summary->estimated_latency_s, 0);

  absl::StatusOr<ReadReport> records = ReadRecords(run.log);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(records->records.size(), 24u);
  std::set<std::string> tasks;
  for (const Record& r : records->records) tasks.insert(r.task_name + r.workload_args.dump());
  EXPECT_EQ(tasks.size(), 12u);

  // Run again on the same log: the job's 24 trials are done, nothing is
  // measured twice, and the estimate is the same records' (no validation).
  std::ostringstream progress2, out2;
  absl::StatusOr<LocalJobSummary> again = RunTune(spec, run, progress2, out2);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->trials, 0);
  for (const LocalTaskOutcome& t : again->tasks) EXPECT_EQ(t.resumed, 2);
  EXPECT_THAT(out2.str(), HasSubstr("24 trials already in"));
  EXPECT_DOUBLE_EQ(again->estimated_latency_s, summary->estimated_latency_s);
  EXPECT_EQ(ReadRecords(run.log)->records.size(), 24u);

  // A larger budget goes on from there: 1 more trial per task.
  job.trials_per_task = 3;
  proto::JobSpec more_spec = spec;
  const proto::JobSpec larger = ModelJobSpec("resnet-18", {}, HostTargetString(), job).value();
  more_spec.set_n_trial(larger.n_trial());
  more_spec.set_trials_per_task(larger.trials_per_task());
  std::ostringstream progress3, out3;
  absl::StatusOr<LocalJobSummary> more = RunTune(more_spec, run, progress3, out3);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_EQ(more->trials, 12);
  EXPECT_EQ(ReadRecords(run.log)->records.size(), 36u);
  EXPECT_LE(more->estimated_latency_s, summary->estimated_latency_s * (1 + 1e-12));
}

TEST(ModelCommandTest, AnUnknownModelIsNamed) {
  absl::StatusOr<proto::JobSpec> spec = ModelJobSpec("resnet-19", {}, "llvm", {});
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("resnet-19"));
}

}  // namespace
}  // namespace tunefleet
