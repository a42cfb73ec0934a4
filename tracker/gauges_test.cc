#include "tracker/gauges.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/scheduler_parts_for_test.h"

namespace tunefleet {
namespace {

TEST(GaugesTest, SnapshotsWorkersQueuesAndJobs) {
  SchedulerParts parts;
  Worker& tuner = parts.AddWorker(proto::TUNER, "t");
  Worker& agent = parts.AddWorker(proto::AGENT, "a", "cpu");
  parts.AddWorker(proto::BUILDER, "b", "", 2);
  Job& running = parts.SubmitJob(4);
  Job& finished = parts.SubmitJob(1);
  parts.dispatcher.DispatchAll(0);  // the tuner (parallelism 1) takes the first job
  ASSERT_EQ(running.tuner_worker, tuner.id);
  parts.ProposeConfigs(running, tuner, {1, 2});
  agent.leases.insert("L-fake");  // busy
  MeasureResult fast;
  fast.costs = {1e-3};
  finished.tasks[0].best.Offer(fast);
  finished.stored.state = proto::SUCCEEDED;
  parts.clock.AdvanceSeconds(2);

  RefreshGauges(parts.jobs, parts.workers, parts.clock.NowSeconds(), parts.metrics);

  std::vector<WorkerCount> workers = parts.metrics.workers();
  ASSERT_EQ(workers.size(), 3u);
  EXPECT_EQ(workers[0].role, WorkerRole::kBuilder);
  EXPECT_EQ(workers[0].free, 1);
  EXPECT_EQ(workers[1].role, WorkerRole::kAgent);
  EXPECT_EQ(workers[1].device_key, "cpu");
  EXPECT_EQ(workers[1].busy, 1);
  EXPECT_EQ(workers[2].role, WorkerRole::kTuner);
  EXPECT_EQ(workers[2].busy, 1);

  std::vector<QueueStat> queues = parts.metrics.queues();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[0].stage, QueueStage::kBuild);
  EXPECT_EQ(queues[0].depth, 2);
  EXPECT_DOUBLE_EQ(queues[0].oldest_age_seconds, 2);
  EXPECT_EQ(queues[1].stage, QueueStage::kMeasure);
  EXPECT_EQ(queues[1].depth, 0);

  JobStats jobs = parts.metrics.jobs();
  EXPECT_EQ(jobs.of(PriorityClass::kOne).running, 1);
  EXPECT_EQ(jobs.of(PriorityClass::kOne).succeeded, 1);
  EXPECT_EQ(jobs.of(PriorityClass::kOne).trials_target, 4);
  ASSERT_EQ(jobs.best_gflops.size(), 1u);
  EXPECT_EQ(jobs.best_gflops[0].target, "llvm");
  EXPECT_DOUBLE_EQ(jobs.best_gflops[0].gflops,
                   finished.tasks[0].task->workload().flops() / 1e-3 / 1e9);
}

TEST(GaugesTest, JobsAndTheirProgressAreCountedByPriorityClass) {
  SchedulerParts parts;
  parts.SubmitJob(10, "cpu", /*priority=*/1);
  parts.SubmitJob(20, "cpu", /*priority=*/3);
  Job& urgent = parts.SubmitJob(30, "cpu", /*priority=*/5);
  Job& done = parts.SubmitJob(40, "cpu", /*priority=*/100);
  urgent.stored.state = proto::RUNNING;
  urgent.done = 7;
  done.stored.state = proto::SUCCEEDED;

  RefreshGauges(parts.jobs, parts.workers, parts.clock.NowSeconds(), parts.metrics);

  const JobStats jobs = parts.metrics.jobs();
  EXPECT_EQ(jobs.of(PriorityClass::kOne).queued, 1);
  EXPECT_EQ(jobs.of(PriorityClass::kOne).trials_target, 10);
  EXPECT_EQ(jobs.of(PriorityClass::kTwoToThree).queued, 1);
  EXPECT_EQ(jobs.of(PriorityClass::kTwoToThree).trials_target, 20);
  EXPECT_EQ(jobs.of(PriorityClass::kFourToSeven).running, 1);
  EXPECT_EQ(jobs.of(PriorityClass::kFourToSeven).trials_done, 7);
  EXPECT_EQ(jobs.of(PriorityClass::kFourToSeven).trials_target, 30);
  // A finished job counts by state but not in progress.
  EXPECT_EQ(jobs.of(PriorityClass::kEightAndUp).succeeded, 1);
  EXPECT_EQ(jobs.of(PriorityClass::kEightAndUp).trials_target, 0);
}

TEST(GaugesTest, PriorityClassesArePowersOfTwo) {
  EXPECT_EQ(PriorityClassOf(0), PriorityClass::kOne);  // 0 means 1
  EXPECT_EQ(PriorityClassOf(1), PriorityClass::kOne);
  EXPECT_EQ(PriorityClassOf(2), PriorityClass::kTwoToThree);
  EXPECT_EQ(PriorityClassOf(3), PriorityClass::kTwoToThree);
  EXPECT_EQ(PriorityClassOf(4), PriorityClass::kFourToSeven);
  EXPECT_EQ(PriorityClassOf(7), PriorityClass::kFourToSeven);
  EXPECT_EQ(PriorityClassOf(8), PriorityClass::kEightAndUp);
  EXPECT_EQ(PriorityClassOf(1 << 30), PriorityClass::kEightAndUp);
  EXPECT_EQ(LabelValue(PriorityClass::kTwoToThree), "2-3");
  EXPECT_EQ(LabelValue(PriorityClass::kEightAndUp), "8+");
}

TEST(GaugesTest, ModelJobsAreCountedWithTheirTunedTasks) {
  SchedulerParts parts;
  parts.AddWorker(proto::TUNER, "t");
  Job& job = parts.SubmitJob(4);
  // Make it a model job of two tasks, running, with one task tuned.
  job.stored.spec.add_tasks()->CopyFrom(job.stored.spec.tasks(0));
  job.tasks = LoadJobTasks(job.stored.spec).value();
  job.stored.state = proto::RUNNING;
  MeasureResult fast;
  fast.costs = {1e-3};
  job.tasks[1].best.Offer(fast);
  RefreshGauges(parts.jobs, parts.workers, parts.clock.NowSeconds(), parts.metrics);
  JobStats jobs = parts.metrics.jobs();
  EXPECT_EQ(jobs.model_jobs_running, 1);
  EXPECT_EQ(jobs.model_jobs_queued, 0);
  EXPECT_EQ(jobs.model_tasks_tuned, 1);
  EXPECT_EQ(jobs.model_tasks_untuned, 1);
}

}  // namespace
}  // namespace tunefleet
