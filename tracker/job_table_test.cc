#include "tracker/job_table.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<Job> NewJob(int64_t sequence) {
  auto job = std::make_unique<Job>();
  job->stored.sequence = sequence;
  job->stored.job_id = "job-" + std::to_string(sequence);
  job->stored.state = proto::RUNNING;
  job->stored.spec.set_n_trial(4);
  return job;
}

proto::JobEvent EventWithTrial(int64_t trial_id) {
  proto::JobEvent e;
  e.set_trial_id(trial_id);
  return e;
}

TEST(JobTableTest, KeepsSubmissionOrderAndNeverReusesASequence) {
  JobTable table;
  table.Add(NewJob(10));
  table.Add(NewJob(2));
  EXPECT_THAT(table.submission_order(), ElementsAre("job-10", "job-2"));
  EXPECT_EQ(table.TakeSequence(), 11);
  ASSERT_NE(table.Find("job-2"), nullptr);
  EXPECT_EQ(table.Find("job-3"), nullptr);
  EXPECT_EQ(table.by_id().size(), 2u);
}

TEST(JobTableTest, WatcherGetsTheFirstEventThenEveryEventUntilItSaysStop) {
  JobTable table;
  Job& job = table.Add(NewJob(1));
  std::vector<int64_t> seen;
  table.Watch(
      job,
      [&](const proto::JobEvent& e) {
        seen.push_back(e.trial_id());
        return e.trial_id() < 1;
      },
      EventWithTrial(-1));
  table.Notify(job, EventWithTrial(0));
  table.Notify(job, EventWithTrial(1));  // returns false: unsubscribed
  table.Notify(job, EventWithTrial(2));
  EXPECT_THAT(seen, ElementsAre(-1, 0, 1));
  EXPECT_TRUE(job.watchers.empty());
}

TEST(JobTableTest, UnwatchAndEndWatchesDropSubscriptions) {
  JobTable table;
  Job& job = table.Add(NewJob(1));
  int calls = 0;
  auto count = [&](const proto::JobEvent&) {
    ++calls;
    return true;
  };
  const int64_t first = table.Watch(job, count, EventWithTrial(-1));
  table.Watch(job, count, EventWithTrial(-1));
  table.Unwatch(first);
  table.Notify(job, EventWithTrial(0));
  EXPECT_EQ(calls, 3);  // two first events, one trial event
  table.EndWatches(job);
  table.Notify(job, EventWithTrial(1));
  EXPECT_EQ(calls, 3);
  table.Unwatch(first);  // unknown by now: a no-op
}

TEST(JobTableTest, FinishedJobGetsTheFirstEventOnly) {
  JobTable table;
  Job& job = table.Add(NewJob(1));
  job.stored.state = proto::SUCCEEDED;
  int calls = 0;
  table.Watch(job, [&](const proto::JobEvent&) { return ++calls > 0; }, EventWithTrial(-1));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(job.watchers.empty());
}

proto::TaskSpec DenseTask(int m) {
  proto::TaskSpec task;
  task.set_workload_name("dense");
  task.set_workload_args_json(absl::StrCat(R"({"M":)", m, R"(,"N":64,"K":64,"layout":"NK"})"));
  task.set_target("llvm");
  return task;
}

proto::JobSpec MinimalSpec() {
  proto::JobSpec spec;
  spec.set_device_key("cpu");
  spec.set_n_trial(10);
  *spec.mutable_task() = DenseTask(16);
  return spec;
}

TEST(CompleteJobSpecTest, FillsDefaults) {
  SchedulerOptions options;
  options.default_max_attempts = 5;
  options.default_build_timeout_s = 30;
  proto::JobSpec spec = CompleteJobSpec(MinimalSpec(), options).value();
  EXPECT_EQ(spec.priority(), 1);
  EXPECT_EQ(spec.max_attempts(), 5);
  EXPECT_EQ(spec.build_timeout_s(), 30);
  EXPECT_EQ(spec.tuner(), "random");
  EXPECT_EQ(spec.measure().number(), ToProto(MeasureOptions()).number());
  // Canonical form: the one task moved into `tasks`, weight 1, gradient policy.
  EXPECT_FALSE(spec.has_task());
  ASSERT_EQ(spec.tasks_size(), 1);
  EXPECT_EQ(spec.tasks(0).task().workload_name(), "dense");
  EXPECT_EQ(spec.tasks(0).weight(), 1);
  EXPECT_EQ(spec.task_policy(), "gradient");
}

TEST(CompleteJobSpecTest, PlanSizeIsBounded) {
  SchedulerOptions options;
  proto::JobSpec spec = MinimalSpec();
  spec.set_plan_size(32);
  EXPECT_EQ(CompleteJobSpec(spec, options).value().plan_size(), 32);
  for (const int32_t bad : {0, -1, kMaxPlanSize + 1}) {
    spec.set_plan_size(bad);
    absl::StatusOr<proto::JobSpec> refused = CompleteJobSpec(spec, options);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(refused.status().message(), HasSubstr("plan_size must be in [1, 4096]")) << bad;
  }
}

TEST(CompleteJobSpecTest, ModelJobsAreCheckedTaskByTask) {
  SchedulerOptions options;
  proto::JobSpec spec = MinimalSpec();
  spec.clear_task();
  for (int m : {16, 32}) {
    proto::JobTask* t = spec.add_tasks();
    *t->mutable_task() = DenseTask(m);
    t->set_weight(m == 16 ? 3 : 1);
  }
  spec.set_selective("top3");
  proto::JobSpec done = CompleteJobSpec(spec, options).value();
  EXPECT_EQ(done.tasks(0).weight(), 3);
  std::vector<JobTask> tasks = LoadJobTasks(done).value();
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].weight, 3);
  EXPECT_FALSE(tasks[1].name.empty());

  proto::JobSpec both = spec;
  *both.mutable_task() = DenseTask(8);
  EXPECT_THAT(CompleteJobSpec(both, options).status().message(), HasSubstr("not both"));
  proto::JobSpec bad = spec;
  bad.mutable_tasks(1)->set_weight(-2);
  EXPECT_THAT(CompleteJobSpec(bad, options).status().message(),
              HasSubstr("task 1: weight must be finite and > 0"));
  bad = spec;
  bad.set_task_policy("lottery");
  EXPECT_THAT(CompleteJobSpec(bad, options).status().message(),
              HasSubstr("unknown task scheduler 'lottery'"));
  bad = spec;
  bad.set_selective("best");
  EXPECT_FALSE(CompleteJobSpec(bad, options).ok());
  bad = spec;
  bad.set_selective_followup_trials(-1);
  EXPECT_THAT(CompleteJobSpec(bad, options).status().message(),
              HasSubstr("selective_followup_trials must be >= 0, got -1"));
  bad = spec;
  bad.clear_tasks();
  EXPECT_THAT(CompleteJobSpec(bad, options).status().message(), HasSubstr("no task"));
  bad = spec;
  bad.mutable_tasks(1)->mutable_task()->set_workload_name("no_such_op");
  proto::JobSpec completed = CompleteJobSpec(bad, options).value();
  EXPECT_THAT(LoadJobTasks(completed).status().message(), HasSubstr("task 1: "));
}

TEST(CompleteJobSpecTest, RefusesFieldsOutOfRangeByName) {
  SchedulerOptions options;
  options.max_trials_per_job = 100;
  proto::JobSpec spec = MinimalSpec();
  spec.set_n_trial(101);
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("n_trial must be in [1, 100]"));
  spec = MinimalSpec();
  spec.set_device_key("");
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(), HasSubstr("device_key"));
  spec = MinimalSpec();
  spec.set_priority(-1);
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(), HasSubstr("priority"));
  spec.set_priority(kMaxJobPriority + 1);  // one job may not take every agent of its key
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("priority must be in [0, 100]"));
  spec = MinimalSpec();
  spec.mutable_measure()->set_cooldown_interval_s(1e8);  // agents asleep for years
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("cooldown_interval_s = 1e+08 is invalid: must be in [0, 10] s"));
  spec = MinimalSpec();
  spec.set_max_attempts(1'000'000);  // one trial retried without end
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("max_attempts must be in [0, 20]"));
  spec = MinimalSpec();
  spec.set_pretuned_family(std::string(1 << 20, 'x'));  // a family name is a few bytes
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("pretuned_family must be at most 64 bytes"));
  spec = MinimalSpec();
  spec.set_window(1 << 30);
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("window must be in [0, 512]"));
  spec = MinimalSpec();
  spec.set_build_timeout_s(1e9);  // a builder slot held for decades
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("build_timeout_s must be at most 3600"));
  spec = MinimalSpec();
  spec.set_tuner("oracle");
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(),
              HasSubstr("unknown tuner \"oracle\""));
  spec = MinimalSpec();
  spec.mutable_measure()->set_number(0);
  spec.mutable_measure()->set_repeat(1);
  spec.mutable_measure()->set_timeout_s(1);
  EXPECT_THAT(CompleteJobSpec(spec, options).status().message(), HasSubstr("measure options: "));
}

TEST(StatusOfTest, ReportsCountsTunerAndAWaitingStoreWrite) {
  auto job = NewJob(3);
  job->trials[0];
  job->trials[1];
  job->done = 1;
  job->failed = 1;
  job->stored.message = "stored message";
  proto::JobStatus status = StatusOf(*job, "tuner-a");
  EXPECT_EQ(status.job_id(), "job-3");
  EXPECT_EQ(status.trials_done(), 1);
  EXPECT_EQ(status.trials_failed(), 1);
  EXPECT_EQ(status.trials_in_flight(), 1);
  EXPECT_EQ(status.tuner(), "tuner-a");
  EXPECT_EQ(status.message(), "stored message");
  job->store_error = "store write failed (x): disk full";
  EXPECT_EQ(StatusOf(*job, "").message(), "store write failed (x): disk full");
  job->stored.state = proto::CANCELLED;
  EXPECT_EQ(StatusOf(*job, "").trials_in_flight(), 0);
}

TEST(StatusOfTest, ModelJobReportsEachTaskAndTheEstimatedLatency) {
  auto job = NewJob(4);
  proto::JobSpec spec = MinimalSpec();
  spec.clear_task();
  for (int m : {16, 32, 64}) {
    proto::JobTask* t = spec.add_tasks();
    *t->mutable_task() = DenseTask(m);
    t->set_weight(m == 16 ? 4 : 1);
  }
  job->stored.spec = spec;
  job->tasks = LoadJobTasks(spec).value();
  MeasureResult fast, slow;
  fast.costs = {1e-3};
  slow.costs = {5e-3};
  job->tasks[0].best.Offer(fast);
  job->tasks[0].done = 2;
  job->tasks[1].best.Offer(slow);
  proto::JobStatus status = StatusOf(*job, "");
  ASSERT_EQ(status.tasks_size(), 3);
  EXPECT_EQ(status.tasks(0).trials_done(), 2);
  EXPECT_DOUBLE_EQ(status.tasks(0).best_cost_s(), 1e-3);
  EXPECT_DOUBLE_EQ(status.tasks(1).weight(), 1);
  EXPECT_DOUBLE_EQ(status.estimated_latency_s(), 4 * 1e-3 + 5e-3);
  EXPECT_EQ(status.untuned_tasks(), 1);
  EXPECT_EQ(status.best_gflops(), 0) << "a model job has no single best";
}

}  // namespace
}  // namespace tunefleet
