#include "tracker/trial_lifecycle.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/scheduler_parts_for_test.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TrialLifecycleTest : public ::testing::Test {
 protected:
  // A RUNNING job held by tuner_, watched into events_.
  Job& SubmitRunningJob(int64_t n_trial) {
    Job& job = parts_.SubmitJob(n_trial);
    job.tuner_worker = tuner_.id;
    tuner_.jobs.insert(job.stored.job_id);
    EXPECT_TRUE(lifecycle_.Start(job).ok());
    parts_.jobs.Watch(
        job,
        [this](const proto::JobEvent& e) {
          events_.push_back(e);
          return true;
        },
        proto::JobEvent());
    events_.clear();
    return job;
  }

  std::vector<Trial*> Propose(Job& job, const std::vector<int64_t>& indices,
                              bool finished = false) {
    return parts_.ProposeConfigs(job, tuner_, indices, finished);
  }

  void Build(Job& job, Trial& trial) {
    job.to_build.erase(std::find(job.to_build.begin(), job.to_build.end(), trial.id));
    trial.state = TrialState::kBuilding;
    proto::BuildResult result;
    result.set_shared_object("ELF");
    result.set_entry_name("kernel");
    result.set_artifact_hash("h" + std::to_string(trial.id));
    result.set_build_seconds(0.5);
    lifecycle_.Built(job, trial, result, builder_, clock_.NowSeconds());
  }

  void Measure(Job& job, Trial& trial, double cost = 1e-3) {
    job.to_measure.erase(std::find(job.to_measure.begin(), job.to_measure.end(), trial.id));
    trial.state = TrialState::kMeasuring;
    proto::MeasureResult result;
    result.mutable_run()->add_costs(cost);
    result.set_measure_seconds(0.1);
    lifecycle_.Measured(job, trial, result, agent_);
  }

  SchedulerParts parts_;
  SchedulerOptions& options_ = parts_.options;
  FakeClock& clock_ = parts_.clock;
  FailingStore& store_ = parts_.store;
  FakeTrackerMetrics& metrics_ = parts_.metrics;
  TrialLifecycle& lifecycle_ = parts_.lifecycle;
  Worker& tuner_ = parts_.AddWorker(proto::TUNER, "tuner");
  Worker& builder_ = parts_.AddWorker(proto::BUILDER, "builder");
  Worker& agent_ = parts_.AddWorker(proto::AGENT, "agent", "cpu");
  FakeOutbox& tuner_outbox_ = SchedulerParts::outbox_of(tuner_);
  std::vector<proto::JobEvent> events_;
};

TEST_F(TrialLifecycleTest, ProposedConfigsBecomeTrialsToBuild) {
  Job& job = SubmitRunningJob(3);
  EXPECT_EQ(job.stored.state, proto::RUNNING);
  std::vector<Trial*> trials = Propose(job, {4, 5});
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_THAT(job.to_build, ElementsAre(0, 1));
  auto accepted = tuner_outbox_.Take(proto::TrackerMessage::kAccepted);
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_THAT(accepted[0].accepted().trial_ids(), ElementsAre(0, 1));
  EXPECT_EQ(store_.LoadTrials(job.stored.job_id)->size(), 2u);
}

TEST_F(TrialLifecycleTest, TrialGoesThroughBuildAndMeasureToDone) {
  Job& job = SubmitRunningJob(1);
  Trial& trial = *Propose(job, {7})[0];
  Build(job, trial);
  EXPECT_EQ(trial.state, TrialState::kToMeasure);
  EXPECT_THAT(job.to_measure, ElementsAre(0));
  Measure(job, trial, 2e-3);
  EXPECT_EQ(trial.state, TrialState::kDone);
  EXPECT_TRUE(trial.done);
  EXPECT_EQ(trial.result.agent(), "agent");
  EXPECT_EQ(trial.result.builder(), "builder");
  EXPECT_DOUBLE_EQ(job.tasks[0].best.cost_s(), 2e-3);
  auto updates = tuner_outbox_.Take(proto::TrackerMessage::kTrialUpdate);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].trial_update().result().costs(0), 2e-3);
  EXPECT_EQ(metrics_.trials_finished(0), 1);
  // One trial event, then the end (all 1 trials done).
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[0].trial_id(), 0);
  EXPECT_EQ(events_[1].status().state(), proto::SUCCEEDED);
  EXPECT_EQ(job.stored.state, proto::SUCCEEDED);
  EXPECT_EQ(tuner_outbox_.Take(proto::TrackerMessage::kReleased).size(), 1u);
  EXPECT_EQ(store_.LoadRecordLines(job.stored.job_id)->size(), 1u);
}

TEST_F(TrialLifecycleTest, BuildWithoutAnArtifactOrTooBigEndsTheTrialWithCompileHost) {
  options_.max_artifact_bytes = 4;
  Job& job = SubmitRunningJob(2);
  std::vector<Trial*> trials = Propose(job, {1, 2});
  proto::BuildResult empty;
  lifecycle_.Built(job, *trials[0], empty, builder_, 0);
  EXPECT_EQ(trials[0]->result.error_no(), static_cast<int>(MeasureErrorNo::kCompileHost));
  EXPECT_THAT(trials[0]->result.error_msg(), HasSubstr("without an artifact"));
  proto::BuildResult big;
  big.set_shared_object("0123456789");
  big.set_entry_name("kernel");
  big.set_artifact_hash("h");
  lifecycle_.Built(job, *trials[1], big, builder_, 0);
  EXPECT_THAT(trials[1]->result.error_msg(), HasSubstr("exceeds the limit of 4"));
  EXPECT_EQ(job.failed, 2);
}

TEST_F(TrialLifecycleTest, JobWhoseEveryTrialFailedEndsFailedSayingWhy) {
  Job& job = SubmitRunningJob(2);
  std::vector<Trial*> trials = Propose(job, {1, 2});
  for (Trial* t : trials) {
    proto::BuildResult bad;
    bad.set_error_no(static_cast<int>(MeasureErrorNo::kCompileHost));
    bad.set_error_msg("'-mcpu=nosuchcpu' is not a CPU LLVM knows");
    lifecycle_.Built(job, *t, bad, builder_, 0);
  }
  EXPECT_EQ(job.stored.state, proto::FAILED);
  EXPECT_THAT(job.stored.message, HasSubstr("every trial failed"));
  EXPECT_THAT(job.stored.message, HasSubstr("nosuchcpu"));
}

TEST_F(TrialLifecycleTest, QueueTimeoutFailsAJobWhoseKeyHasNoAgent) {
  Job& job = SubmitRunningJob(2);
  job.stored.spec.set_device_key("rk3399");
  job.stored.spec.set_queue_timeout_s(10);
  lifecycle_.FailJobsWithoutAgents();  // the wait starts
  clock_.AdvanceSeconds(9);
  lifecycle_.FailJobsWithoutAgents();
  EXPECT_FALSE(job.finished());
  clock_.AdvanceSeconds(2);
  lifecycle_.FailJobsWithoutAgents();
  EXPECT_EQ(job.stored.state, proto::FAILED);
  EXPECT_THAT(job.stored.message, HasSubstr("no agent of key 'rk3399' was connected for 10 s"));
  // A job whose key has an agent never times out.
  Job& served = SubmitRunningJob(2);
  served.stored.spec.set_queue_timeout_s(1);
  clock_.AdvanceSeconds(5);
  lifecycle_.FailJobsWithoutAgents();
  clock_.AdvanceSeconds(5);
  lifecycle_.FailJobsWithoutAgents();
  EXPECT_FALSE(served.finished());
}

TEST_F(TrialLifecycleTest, JobWithoutAnAgentOfItsKeySaysSoInItsStatus) {
  Job& job = SubmitRunningJob(2);
  // The fixture's agent serves key "cpu"; a job on another key waits.
  job.stored.spec.set_device_key("rk3399");
  EXPECT_THAT(lifecycle_.StatusOf(job).message(), HasSubstr("no agent of key 'rk3399'"));
  job.stored.spec.set_device_key("cpu");
  EXPECT_EQ(lifecycle_.StatusOf(job).message(), "");
}

TEST_F(TrialLifecycleTest, ResultTheStoreRefusesIsHeldAndAcknowledgedOnlyOnceStored) {
  Job& job = SubmitRunningJob(2);
  Trial& trial = *Propose(job, {3})[0];
  Build(job, trial);
  store_.FailWrites(absl::UnavailableError("disk full"));
  Measure(job, trial);
  EXPECT_EQ(trial.state, TrialState::kResultUnstored);
  EXPECT_FALSE(trial.done);
  EXPECT_EQ(job.done, 0);
  EXPECT_TRUE(tuner_outbox_.Take(proto::TrackerMessage::kTrialUpdate).empty());
  EXPECT_TRUE(events_.empty());
  EXPECT_EQ(metrics_.trials_finished(0), 0);
  EXPECT_THAT(lifecycle_.StatusOf(job).message(), HasSubstr("store write failed (result of job"));

  lifecycle_.RetryStoreWrites();  // the store still refuses
  EXPECT_TRUE(tuner_outbox_.Take(proto::TrackerMessage::kTrialUpdate).empty());

  store_.FailWrites(absl::OkStatus());
  lifecycle_.RetryStoreWrites();
  EXPECT_TRUE(trial.done);
  EXPECT_EQ(job.done, 1);
  EXPECT_EQ(tuner_outbox_.Take(proto::TrackerMessage::kTrialUpdate).size(), 1u);
  ASSERT_EQ(events_.size(), 1u);
  EXPECT_EQ(events_[0].trial_id(), trial.id);
  EXPECT_EQ(lifecycle_.StatusOf(job).message(), "");
}

TEST_F(TrialLifecycleTest, RequeueGoesToTheFrontOfTheQueueOfTheLostStage) {
  Job& job = SubmitRunningJob(3);
  std::vector<Trial*> trials = Propose(job, {1, 2, 3});
  Build(job, *trials[0]);
  Build(job, *trials[1]);
  // trials[1] was being measured (its artifact is here): measure it again first.
  job.to_measure.erase(std::find(job.to_measure.begin(), job.to_measure.end(), trials[1]->id));
  trials[1]->attempts = 1;
  lifecycle_.Requeue(job, *trials[1], Stage::kMeasure, "agent lost");
  EXPECT_THAT(job.to_measure, ElementsAre(1, 0));
  // trials[2] was being built: build it again first.
  job.to_build.clear();
  trials[2]->attempts = 1;
  lifecycle_.Requeue(job, *trials[2], Stage::kBuild, "builder lost");
  EXPECT_THAT(job.to_build, ElementsAre(2));
  EXPECT_EQ(store_.LoadTrials(job.stored.job_id).value()[2].attempts, 1);
}

TEST_F(TrialLifecycleTest, RequeueTheStoreRefusesWaitsOutsideEveryQueue) {
  Job& job = SubmitRunningJob(1);
  Trial& trial = *Propose(job, {1})[0];
  job.to_build.clear();
  trial.attempts = 1;
  store_.FailWrites(absl::UnavailableError("disk full"));
  lifecycle_.Requeue(job, trial, Stage::kBuild, "builder lost");
  EXPECT_EQ(trial.state, TrialState::kRequeueUnstored);
  EXPECT_TRUE(job.to_build.empty());
  store_.FailWrites(absl::OkStatus());
  lifecycle_.RetryStoreWrites();
  EXPECT_EQ(trial.state, TrialState::kToBuild);
  EXPECT_THAT(job.to_build, ElementsAre(0));
}

TEST_F(TrialLifecycleTest, GiveUpEndsTheTrialSayingWhy) {
  Job& job = SubmitRunningJob(1);
  Trial& trial = *Propose(job, {1})[0];
  Build(job, trial);
  trial.attempts = 3;
  lifecycle_.GiveUp(job, trial, Stage::kMeasure, "agent \"a\" lost: kill -9");
  EXPECT_TRUE(trial.done);
  // An infrastructure outcome, not a device runtime error of the config.
  EXPECT_EQ(trial.result.error_no(), static_cast<int>(MeasureErrorNo::kUnknown));
  EXPECT_TRUE(trial.result.infrastructure());
  EXPECT_THAT(trial.result.error_msg(), HasSubstr("gave up after 3 attempts"));
  EXPECT_THAT(trial.result.error_msg(), HasSubstr("kill -9"));
  EXPECT_EQ(job.failed, 1);
}

TEST_F(TrialLifecycleTest, JobTransitionsTheStoreRefusesChangeNothing) {
  Job& job = SubmitRunningJob(2);
  store_.FailWrites(absl::UnavailableError("disk full"));
  EXPECT_EQ(lifecycle_.End(job, proto::CANCELLED, "cancelled").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(job.stored.state, proto::RUNNING);
  EXPECT_TRUE(events_.empty());
  EXPECT_TRUE(tuner_outbox_.Take(proto::TrackerMessage::kReleased).empty());

  // The tuner ends the search: SUCCEEDED waits for the store.
  Propose(job, {}, /*finished=*/true);
  EXPECT_EQ(job.stored.state, proto::RUNNING);
  EXPECT_THAT(lifecycle_.StatusOf(job).message(),
              HasSubstr("the job ends once the store takes it"));
  store_.FailWrites(absl::OkStatus());
  lifecycle_.RetryStoreWrites();
  EXPECT_EQ(job.stored.state, proto::SUCCEEDED);
  EXPECT_EQ(store_.LoadJobs().value()[0].state, proto::SUCCEEDED);
}

TEST_F(TrialLifecycleTest, StartTheStoreRefusesLeavesTheJobQueued) {
  Job& job = parts_.SubmitJob(1);
  store_.FailWrites(absl::UnavailableError("disk full"));
  EXPECT_FALSE(lifecycle_.Start(job).ok());
  EXPECT_EQ(job.stored.state, proto::QUEUED);
  EXPECT_EQ(job.stored.started_at, 0);
  EXPECT_THAT(lifecycle_.StatusOf(job).message(), HasSubstr("stays queued"));
}

TEST_F(TrialLifecycleTest, ResumeKeepsFinishedJobsResultsAndFailsOnlyAJobWithABadRow) {
  Job& done = SubmitRunningJob(1);
  Trial& trial = *Propose(done, {1})[0];
  Build(done, trial);
  Measure(done, trial, 3e-3);
  ASSERT_EQ(done.stored.state, proto::SUCCEEDED);
  Job& damaged = SubmitRunningJob(2);
  StoredTrial bad;
  bad.job_id = damaged.stored.job_id;
  bad.trial_id = 0;
  bad.config_json = "{}";
  bad.task_index = 5;  // the job has one task
  ASSERT_TRUE(store_.PutTrials({bad}).ok());

  JobTable resumed_jobs;
  TrialLifecycle resumed(&options_, &resumed_jobs, &parts_.workers, &parts_.writer, &metrics_,
                         &clock_);
  ASSERT_TRUE(resumed.Resume(store_).ok()) << "one bad row must not stop the tracker";
  proto::JobStatus status = resumed.StatusOf(*resumed_jobs.Find(done.stored.job_id));
  ASSERT_EQ(status.tasks_size(), 1);
  EXPECT_EQ(status.tasks(0).trials_done(), 1);
  EXPECT_DOUBLE_EQ(status.tasks(0).best_cost_s(), 3e-3);
  EXPECT_EQ(status.untuned_tasks(), 0);
  Job& failed = *resumed_jobs.Find(damaged.stored.job_id);
  EXPECT_EQ(failed.stored.state, proto::FAILED);
  EXPECT_THAT(failed.stored.message, HasSubstr("names task 5"));
}

TEST_F(TrialLifecycleTest, ResumeRebuildsUnfinishedTrialsAndFailsJobsThatNoLongerLoad) {
  Job& job = SubmitRunningJob(3);
  std::vector<Trial*> trials = Propose(job, {1, 2});
  Build(job, *trials[0]);
  Measure(job, *trials[0], 4e-3);
  StoredJob broken;
  broken.job_id = "job-99";
  broken.sequence = 99;
  broken.state = proto::RUNNING;
  broken.spec.mutable_task()->set_workload_name("conv9d");
  broken.spec.mutable_task()->set_target("llvm");
  broken.spec.mutable_task()->set_workload_args_json("{}");
  ASSERT_TRUE(store_.PutJob(broken).ok());

  JobTable resumed_jobs;
  TrialLifecycle resumed(&options_, &resumed_jobs, &parts_.workers, &parts_.writer, &metrics_,
                         &clock_);
  ASSERT_TRUE(resumed.Resume(store_).ok());
  Job& again = *resumed_jobs.Find(job.stored.job_id);
  EXPECT_EQ(again.stored.state, proto::QUEUED);  // until a tuner claims it
  EXPECT_EQ(again.done, 1);
  EXPECT_DOUBLE_EQ(again.tasks[0].best.cost_s(), 4e-3);
  EXPECT_THAT(again.to_build, ElementsAre(1));
  Job& failed = *resumed_jobs.Find("job-99");
  EXPECT_EQ(failed.stored.state, proto::FAILED);
  EXPECT_THAT(failed.stored.message, HasSubstr("cannot resume"));
  EXPECT_EQ(resumed_jobs.TakeSequence(), 100);
}

}  // namespace
}  // namespace tunefleet
