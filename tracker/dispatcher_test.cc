#include "tracker/dispatcher.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/scheduler_parts_for_test.h"

namespace tunefleet {
namespace {

class DispatcherTest : public ::testing::Test {
 protected:
  static FakeOutbox& Out(const Worker& worker) { return SchedulerParts::outbox_of(worker); }

  // Moves every trial of `job` waiting to be built to `to_measure`, as if built.
  void BuildAllQueued(Job& job) {
    while (!job.to_build.empty()) {
      Trial& trial = job.trials.at(job.to_build.front());
      job.to_build.pop_front();
      trial.shared_object = std::make_shared<const std::string>("ELF");
      trial.entry_name = "kernel";
      trial.artifact_hash = "h" + std::to_string(trial.id);
      trial.state = TrialState::kToMeasure;
      job.to_measure.push_back(trial.id);
    }
  }

  SchedulerParts parts_;
  Dispatcher& dispatcher_ = parts_.dispatcher;
};

TEST_F(DispatcherTest, AssignsJobsToTheTunerWithFewestJobsUpToItsParallelism) {
  Worker& t1 = parts_.AddWorker(proto::TUNER, "t1", "", 2);
  Worker& t2 = parts_.AddWorker(proto::TUNER, "t2");
  Job& j1 = parts_.SubmitJob(2);
  Job& j2 = parts_.SubmitJob(2);
  Job& j3 = parts_.SubmitJob(2);
  Job& j4 = parts_.SubmitJob(2);
  dispatcher_.DispatchAll(0);
  EXPECT_EQ(j1.tuner_worker, t1.id);
  EXPECT_EQ(j2.tuner_worker, t2.id);
  EXPECT_EQ(j3.tuner_worker, t1.id);
  EXPECT_EQ(j4.tuner_worker, "");  // every tuner is full
  EXPECT_EQ(j1.stored.state, proto::RUNNING);
  EXPECT_EQ(j4.stored.state, proto::QUEUED);
  EXPECT_EQ(Out(t1).Take(proto::TrackerMessage::kAssignment).size(), 2u);
  EXPECT_EQ(Out(t2).Take(proto::TrackerMessage::kAssignment).size(), 1u);
}

TEST_F(DispatcherTest, AssignmentWaitsWhileTheStoreRefusesRunning) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Job& job = parts_.SubmitJob(2);
  parts_.store.FailWrites(absl::UnavailableError("disk full"));
  dispatcher_.DispatchAll(0);
  EXPECT_EQ(job.tuner_worker, "");
  EXPECT_THAT(tuner.jobs, ::testing::IsEmpty());
  EXPECT_TRUE(Out(tuner).Take(proto::TrackerMessage::kAssignment).empty());
  EXPECT_THAT(job.store_error, ::testing::HasSubstr("disk full"));
  parts_.store.FailWrites(absl::OkStatus());
  dispatcher_.DispatchAll(0);
  EXPECT_EQ(job.tuner_worker, tuner.id);
  EXPECT_EQ(Out(tuner).Take(proto::TrackerMessage::kAssignment).size(), 1u);
}

TEST_F(DispatcherTest, BuildsFillTheBuilderWithTheMostFreeSlots) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Worker& small = parts_.AddWorker(proto::BUILDER, "small", "", 1, "ipv4:10.0.0.1:1");
  Worker& large = parts_.AddWorker(proto::BUILDER, "large", "", 3, "ipv4:10.0.0.2:1");
  Job& job = parts_.SubmitJob(5);
  dispatcher_.DispatchAll(0);
  parts_.ProposeConfigs(job, tuner, {1, 2, 3, 4, 5});
  parts_.clock.AdvanceSeconds(0.25);
  dispatcher_.DispatchAll(parts_.clock.NowSeconds() - 0.25);
  EXPECT_EQ(Out(large).Take(proto::TrackerMessage::kBuild).size(), 3u);
  EXPECT_EQ(Out(small).Take(proto::TrackerMessage::kBuild).size(), 1u);
  EXPECT_EQ(job.to_build.size(), 1u);
  EXPECT_EQ(job.building, 4);
  ASSERT_EQ(parts_.metrics.dispatch_seconds().size(), 4u);
  EXPECT_DOUBLE_EQ(parts_.metrics.dispatch_seconds()[0].second, 0.25);
}

TEST_F(DispatcherTest, NativeIsBuiltForTheCpuOfTheKeysAgents) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Worker& builder = parts_.AddWorker(proto::BUILDER, "b");
  Job& job = parts_.SubmitJob(1);
  job.stored.spec.mutable_tasks(0)->mutable_task()->set_target("llvm -mcpu=native");
  dispatcher_.DispatchAll(0);
  parts_.ProposeConfigs(job, tuner, {1});
  dispatcher_.DispatchAll(0);
  // No agent of the key yet: nobody can say what "native" is, so no build.
  EXPECT_TRUE(Out(builder).Take(proto::TrackerMessage::kBuild).empty());
  parts_.AddWorker(proto::AGENT, "a", "cpu", 1, "test", "cortex-a72");  // a board, not this host
  dispatcher_.DispatchAll(0);
  std::vector<proto::TrackerMessage> builds = Out(builder).Take(proto::TrackerMessage::kBuild);
  ASSERT_EQ(builds.size(), 1u);
  EXPECT_EQ(builds[0].build().task().target(), "llvm -mcpu=cortex-a72");
  EXPECT_EQ(job.trials.at(0).target, "llvm -mcpu=cortex-a72");  // what its record keeps
}

TEST_F(DispatcherTest, EachAgentMeasuresOneTrialAtATimeWithTheArtifactOnce) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Worker& agent = parts_.AddWorker(proto::AGENT, "a", "cpu");
  Job& job = parts_.SubmitJob(3);
  dispatcher_.DispatchAll(0);
  parts_.ProposeConfigs(job, tuner, {1, 2});
  BuildAllQueued(job);
  dispatcher_.MarkAgentFree(agent);
  dispatcher_.DispatchAll(0);
  auto measures = Out(agent).Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(measures.size(), 1u);
  EXPECT_EQ(measures[0].measure().run().shared_object(), "ELF");
  EXPECT_EQ(job.measuring, 1);
  // The agent lost the artifact: it comes again, with the bytes.
  dispatcher_.ResendWithArtifact(agent, job, job.trials.at(measures[0].measure().trial_id()));
  EXPECT_EQ(Out(agent).Take(proto::TrackerMessage::kMeasure)[0].measure().run().shared_object(),
            "ELF");
  EXPECT_EQ(dispatcher_.QueueSummary(0).keys(0).pending(), 1);
}

TEST_F(DispatcherTest, JobsShareAKeyByPriority) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t", "", 2);
  Worker& agent = parts_.AddWorker(proto::AGENT, "a", "cpu");
  Job& low = parts_.SubmitJob(8);
  Job& high = parts_.SubmitJob(8, "cpu", /*priority=*/3);
  dispatcher_.DispatchAll(0);
  std::vector<int64_t> configs = {0, 1, 2, 3, 4, 5, 6, 7};
  parts_.ProposeConfigs(low, tuner, configs);
  parts_.ProposeConfigs(high, tuner, configs);
  BuildAllQueued(low);
  BuildAllQueued(high);
  std::map<std::string, int> served;
  for (int i = 0; i < 8; ++i) {
    dispatcher_.MarkAgentFree(agent);
    dispatcher_.DispatchAll(0);
    for (const auto& m : Out(agent).Take(proto::TrackerMessage::kMeasure)) {
      ++served[m.measure().job_id()];
      parts_.leases.End(m.measure().lease_id());
    }
  }
  EXPECT_EQ(served[high.stored.job_id], 6);
  EXPECT_EQ(served[low.stored.job_id], 2);
}

TEST_F(DispatcherTest, AHostNeverBuildsWhileItMeasuresNorMeasuresWhileItBuilds) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Worker& builder = parts_.AddWorker(proto::BUILDER, "b", "", 2);
  Worker& agent = parts_.AddWorker(proto::AGENT, "a", "cpu");
  Job& job = parts_.SubmitJob(4);
  dispatcher_.DispatchAll(0);
  parts_.ProposeConfigs(job, tuner, {1, 2, 3, 4});
  dispatcher_.DispatchAll(0);
  EXPECT_EQ(Out(builder).Take(proto::TrackerMessage::kBuild).size(), 2u);
  // A built trial waits while the host builds.
  Trial& built = job.trials.at(2);
  job.to_build.erase(std::find(job.to_build.begin(), job.to_build.end(), built.id));
  job.to_measure.push_back(built.id);
  built.shared_object = std::make_shared<const std::string>("ELF");
  dispatcher_.MarkAgentFree(agent);
  dispatcher_.DispatchAll(0);
  EXPECT_TRUE(Out(agent).Take(proto::TrackerMessage::kMeasure).empty());
  // The builds end: the agent measures, and nothing builds meanwhile.
  for (const std::string& lease : std::set<std::string>(builder.leases)) parts_.leases.End(lease);
  dispatcher_.DispatchAll(0);
  EXPECT_EQ(Out(agent).Take(proto::TrackerMessage::kMeasure).size(), 1u);
  EXPECT_TRUE(Out(builder).Take(proto::TrackerMessage::kBuild).empty());
  EXPECT_EQ(job.to_build.size(), 1u);
}

TEST_F(DispatcherTest, CpuAgentsOfOneHostMeasureOneAtATime) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Worker& a = parts_.AddWorker(proto::AGENT, "a", "cpu", 1, "ipv4:10.0.0.5:1");
  Worker& b = parts_.AddWorker(proto::AGENT, "b", "cpu", 1, "ipv4:10.0.0.5:2");
  Worker& elsewhere = parts_.AddWorker(proto::AGENT, "c", "cpu", 1, "ipv4:10.0.0.6:1");
  Job& job = parts_.SubmitJob(4);
  dispatcher_.DispatchAll(0);
  parts_.ProposeConfigs(job, tuner, {1, 2, 3, 4});
  BuildAllQueued(job);
  for (Worker* agent : {&a, &b, &elsewhere}) dispatcher_.MarkAgentFree(*agent);
  dispatcher_.DispatchAll(0);
  const size_t on_a = Out(a).Take(proto::TrackerMessage::kMeasure).size();
  const size_t on_b = Out(b).Take(proto::TrackerMessage::kMeasure).size();
  EXPECT_EQ(on_a + on_b, 1u) << "two measurements at once on one host's cores";
  EXPECT_EQ(Out(elsewhere).Take(proto::TrackerMessage::kMeasure).size(), 1u);
  // The host's measurement ends: its other agent takes the next one.
  Worker& done = on_a == 1 ? a : b;
  Worker& next = on_a == 1 ? b : a;
  for (const std::string& lease : std::set<std::string>(done.leases)) parts_.leases.End(lease);
  dispatcher_.DispatchAll(0);
  EXPECT_EQ(Out(next).Take(proto::TrackerMessage::kMeasure).size(), 1u);
}

TEST_F(DispatcherTest, AForgottenAgentGetsNoWork) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  Worker& agent = parts_.AddWorker(proto::AGENT, "a", "cpu");
  Job& job = parts_.SubmitJob(2);
  dispatcher_.DispatchAll(0);
  dispatcher_.MarkAgentFree(agent);
  dispatcher_.Forget(agent);
  parts_.ProposeConfigs(job, tuner, {1});
  BuildAllQueued(job);
  dispatcher_.DispatchAll(0);
  EXPECT_TRUE(Out(agent).Take(proto::TrackerMessage::kMeasure).empty());
}

TEST_F(DispatcherTest, QueueSummaryCountsWorkersQueuesAndJobs) {
  Worker& tuner = parts_.AddWorker(proto::TUNER, "t");
  parts_.AddWorker(proto::BUILDER, "b", "", 4, "ipv4:10.0.0.9:1");
  Job& job = parts_.SubmitJob(3, "rk3399");
  dispatcher_.DispatchAll(0);
  parts_.ProposeConfigs(job, tuner, {1, 2});
  BuildAllQueued(job);
  parts_.clock.AdvanceSeconds(3);
  proto::QueueSummaryResponse q = dispatcher_.QueueSummary(parts_.clock.NowSeconds());
  EXPECT_EQ(q.builders(), 1);
  EXPECT_EQ(q.build_slots_free(), 4);
  EXPECT_EQ(q.tuners(), 1);
  ASSERT_EQ(q.keys_size(), 1);
  EXPECT_EQ(q.keys(0).device_key(), "rk3399");
  EXPECT_EQ(q.keys(0).total(), 0);
  EXPECT_EQ(q.keys(0).pending(), 2);
  EXPECT_DOUBLE_EQ(q.keys(0).oldest_pending_s(), 3);
  ASSERT_EQ(q.jobs_size(), 1);
  EXPECT_EQ(q.jobs(0).to_measure(), 2);
}

}  // namespace
}  // namespace tunefleet
