#include "tracker/trial_lifecycle.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/text_cap.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tracker/scheduler_parts_for_test.h"
#include "tracker/validation.h"
#include "tuner_core/records/record.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class TrialLifecycleTest : public ::testing::Test {
 protected:
  // A RUNNING job held by tuner_, watched into events_.
  Job& SubmitRunningJob(int64_t n_trial, int validate_top_k = 0, int passes = 3) {
    Job& job = parts_.SubmitJob(n_trial, "cpu", 1, validate_top_k, passes);
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

// A kernel writes its own result frame: a megabyte of error message (what it
// read, say) is stored, streamed and exported cut to the cap.
TEST_F(TrialLifecycleTest, AnErrorMessageIsStoredCapped) {
  Job& job = SubmitRunningJob(1);
  Trial& trial = *Propose(job, {3})[0];
  Build(job, trial);
  job.to_measure.erase(std::find(job.to_measure.begin(), job.to_measure.end(), trial.id));
  trial.state = TrialState::kMeasuring;
  proto::MeasureResult result;
  result.mutable_run()->set_error_no(static_cast<int>(MeasureErrorNo::kRuntimeDevice));
  result.mutable_run()->set_error_msg(std::string(1 << 20, 'k'));
  lifecycle_.Measured(job, trial, result, agent_);
  EXPECT_LE(trial.result.error_msg().size(), kMaxReportedMessageBytes);
  EXPECT_THAT(trial.result.error_msg(), HasSubstr(" bytes cut]"));
  auto lines = store_.LoadRecordLines(job.stored.job_id);
  ASSERT_TRUE(lines.ok());
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_LT((*lines)[0].size(), 2 * kMaxReportedMessageBytes);
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

// ---------------------------------------------------------------- validation

// The validation measurements of `job`, in queue order.
std::vector<Trial*> Validations(Job& job) {
  std::vector<Trial*> out;
  for (int64_t id : job.to_build) {
    if (job.trials.at(id).validates >= 0) out.push_back(&job.trials.at(id));
  }
  return out;
}

TEST_F(TrialLifecycleTest, SearchOverValidatesTheTopKInterleavedThenEndsWithTheValidatedBest) {
  Job& job = SubmitRunningJob(4, /*validate_top_k=*/2, /*passes=*/3);
  std::vector<Trial*> searched = Propose(job, {1, 2, 3, 4});
  const std::vector<double> search_costs = {3e-3, 1e-3, 2e-3, 5e-3};  // top 2: trials 1, 2
  for (size_t i = 0; i < searched.size(); ++i) {
    Build(job, *searched[i]);
    Measure(job, *searched[i], search_costs[i]);
  }
  // All 4 done: not SUCCEEDED yet; 2 candidates x 3 passes queued, A B, B A, A B.
  EXPECT_EQ(job.stored.state, proto::RUNNING);
  std::vector<Trial*> v = Validations(job);
  ASSERT_EQ(v.size(), 6u);
  std::vector<int64_t> order;
  for (const Trial* t : v) order.push_back(t->validates);
  EXPECT_THAT(order, ElementsAre(1, 2, 2, 1, 1, 2));
  EXPECT_EQ(v[2]->validation_pass, 1);
  EXPECT_EQ(v[0]->config_json, searched[1]->config_json);
  proto::JobStatus status = lifecycle_.StatusOf(job);
  EXPECT_EQ(status.validations_total(), 6);
  EXPECT_EQ(status.validations_done(), 0);
  EXPECT_EQ(status.best_figure(), "search");
  EXPECT_EQ(status.trials_done(), 4);  // validations are not search trials
  EXPECT_EQ(status.trials_in_flight(), 0);
  // The tuner never hears of validations, and may propose no more.
  tuner_outbox_.sent.clear();
  EXPECT_TRUE(Propose(job, {7}).empty());
  std::vector<proto::TrackerMessage> answers = tuner_outbox_.Take(proto::TrackerMessage::kAccepted);
  ASSERT_EQ(answers.size(), 1u);
  ASSERT_EQ(answers[0].accepted().rejected_size(), 1);
  EXPECT_THAT(answers[0].accepted().rejected(0), HasSubstr("being validated"));

  // Trial 1 was lucky (validated 1.6e-3 median), trial 2 is really the best
  // (1.5e-3 median, one noisy pass).
  const std::map<int64_t, std::vector<double>> passes = {{1, {1.6e-3, 1.5e-3, 1.7e-3}},
                                                         {2, {1.5e-3, 3e-3, 1.4e-3}}};
  std::map<int64_t, int> seen;
  for (Trial* t : v) {
    Build(job, *t);
    Measure(job, *t, passes.at(t->validates)[seen[t->validates]++]);
  }
  EXPECT_TRUE(tuner_outbox_.Take(proto::TrackerMessage::kTrialUpdate).empty());
  EXPECT_EQ(tuner_outbox_.Take(proto::TrackerMessage::kReleased).size(), 1u);
  ASSERT_EQ(job.stored.state, proto::SUCCEEDED);
  EXPECT_THAT(job.stored.message, HasSubstr("best validated by 6 re-measurements"));
  status = lifecycle_.StatusOf(job);
  EXPECT_EQ(status.best_figure(), "validated");
  EXPECT_DOUBLE_EQ(status.best_cost_s(), 1.5e-3);
  EXPECT_DOUBLE_EQ(status.best_search_cost_s(), 1e-3);
  EXPECT_DOUBLE_EQ(status.tasks(0).best_rel_spread(), (3e-3 - 1.4e-3) / 1.5e-3);
  EXPECT_EQ(status.tasks(0).best_validation_passes(), 3);
  EXPECT_EQ(status.best_config_json(), searched[2]->config_json);
  EXPECT_EQ(status.validations_done(), 6);
  // Watchers saw each validation, marked as such.
  int validation_events = 0;
  for (const proto::JobEvent& e : events_) validation_events += e.has_validates() ? 1 : 0;
  EXPECT_EQ(validation_events, 6);

  // The store: validated records carry both figures; validations have no line.
  absl::StatusOr<std::vector<std::string>> lines = store_.LoadRecordLines(job.stored.job_id);
  ASSERT_TRUE(lines.ok()) << lines.status();
  ASSERT_EQ(lines->size(), 4u);
  int validated = 0;
  for (const std::string& line : *lines) {
    absl::StatusOr<Record> r = Record::FromLine(line);
    ASSERT_TRUE(r.ok()) << r.status();
    if (!r->validated()) continue;
    ++validated;
    EXPECT_EQ(r->validation->pass_costs.size(), 3u);
  }
  EXPECT_EQ(validated, 2);

  // A restarted tracker reports the same validated best.
  JobTable resumed_jobs;
  TrialLifecycle resumed(&options_, &resumed_jobs, &parts_.workers, &parts_.writer, &metrics_,
                         &clock_);
  ASSERT_TRUE(resumed.Resume(store_).ok());
  proto::JobStatus again = resumed.StatusOf(*resumed_jobs.Find(job.stored.job_id));
  EXPECT_EQ(again.best_figure(), "validated");
  EXPECT_DOUBLE_EQ(again.best_cost_s(), 1.5e-3);
}

TEST_F(TrialLifecycleTest, ValidationMeasuresInAFreshRunnerWithMoreRepeats) {
  Job& job = SubmitRunningJob(1, /*validate_top_k=*/5, /*passes=*/2);
  Trial& trial = *Propose(job, {3})[0];
  Build(job, trial);
  Measure(job, trial, 2e-3);
  std::vector<Trial*> v = Validations(job);
  ASSERT_EQ(v.size(), 2u);  // one success: one candidate
  Build(job, *v[0]);
  FakeOutbox& agent_outbox = SchedulerParts::outbox_of(agent_);
  parts_.dispatcher.MarkAgentFree(agent_);
  parts_.dispatcher.DispatchAll(clock_.NowSeconds());
  std::vector<proto::TrackerMessage> measures = agent_outbox.Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(measures.size(), 1u);
  const proto::MeasureRequest& request = measures[0].measure();
  EXPECT_EQ(request.trial_id(), v[0]->id);
  EXPECT_TRUE(request.fresh_runner());
  const MeasureOptions search = ResolveMeasureOptions(job.stored.spec.measure());
  const MeasureOptions sent = ResolveMeasureOptions(request.run().options());
  EXPECT_EQ(sent.repeat, ValidationMeasureOptions(search).repeat);
  EXPECT_GT(sent.repeat, search.repeat);
  EXPECT_FALSE(sent.check_correctness);
}

TEST_F(TrialLifecycleTest, FailedValidationPassesFallBackToTheSearchFigure) {
  Job& job = SubmitRunningJob(1, /*validate_top_k=*/1, /*passes=*/1);
  Trial& trial = *Propose(job, {3})[0];
  Build(job, trial);
  Measure(job, trial, 2e-3);
  Trial& pass = *Validations(job)[0];
  Build(job, pass);
  Measure(job, pass, -1.0);  // a forged cost: an error result, never a best
  ASSERT_EQ(job.stored.state, proto::SUCCEEDED);
  proto::JobStatus status = lifecycle_.StatusOf(job);
  EXPECT_EQ(status.best_figure(), "search");
  EXPECT_DOUBLE_EQ(status.best_cost_s(), 2e-3);
}

TEST_F(TrialLifecycleTest, ValidationTheStoreRefusesWaitsAndNothingIsReportedValidated) {
  Job& job = SubmitRunningJob(1, /*validate_top_k=*/1, /*passes=*/1);
  Trial& trial = *Propose(job, {3})[0];
  Build(job, trial);
  Measure(job, trial, 2e-3);
  Trial& pass = *Validations(job)[0];
  Build(job, pass);
  store_.FailWrites(absl::UnavailableError("disk gone"));
  Measure(job, pass, 2.2e-3);  // the result itself is held
  EXPECT_EQ(job.stored.state, proto::RUNNING);
  store_.FailWrites(absl::OkStatus());
  lifecycle_.RetryStoreWrites();
  ASSERT_EQ(job.stored.state, proto::SUCCEEDED);
  EXPECT_EQ(lifecycle_.StatusOf(job).best_figure(), "validated");
  EXPECT_DOUBLE_EQ(lifecycle_.StatusOf(job).best_cost_s(), 2.2e-3);
}

TEST_F(TrialLifecycleTest, ARestartDuringValidationMeasuresWhatIsLeftAndRefusesProposals) {
  Job& job = SubmitRunningJob(2, /*validate_top_k=*/2, /*passes=*/1);
  std::vector<Trial*> searched = Propose(job, {1, 2});
  Build(job, *searched[0]);
  Measure(job, *searched[0], 2e-3);
  Build(job, *searched[1]);
  Measure(job, *searched[1], 3e-3);
  std::vector<Trial*> v = Validations(job);
  ASSERT_EQ(v.size(), 2u);
  Build(job, *v[0]);
  Measure(job, *v[0], 2.1e-3);

  JobTable resumed_jobs;
  TrialLifecycle resumed(&options_, &resumed_jobs, &parts_.workers, &parts_.writer, &metrics_,
                         &clock_);
  ASSERT_TRUE(resumed.Resume(store_).ok());
  Job& again = *resumed_jobs.Find(job.stored.job_id);
  EXPECT_EQ(again.validations, 2);
  EXPECT_EQ(again.validations_done, 1);
  EXPECT_EQ(again.done, 2);
  ASSERT_THAT(again.to_build, ElementsAre(v[1]->id));
  again.tuner_worker = tuner_.id;
  ASSERT_TRUE(resumed.Start(again).ok());
  // A tuner taking it over finds the search over.
  proto::ProposeTrials propose;
  propose.set_job_id(again.stored.job_id);
  propose.set_finished(true);
  resumed.Propose(again, tuner_, propose, clock_.NowSeconds());
  EXPECT_EQ(again.stored.state, proto::RUNNING);
  Trial& left = again.trials.at(v[1]->id);
  again.to_build.clear();
  left.state = TrialState::kBuilding;
  proto::BuildResult built;
  built.set_shared_object("ELF");
  built.set_entry_name("kernel");
  built.set_artifact_hash("h");
  resumed.Built(again, left, built, builder_, clock_.NowSeconds());
  again.to_measure.clear();
  proto::MeasureResult measured;
  measured.mutable_run()->add_costs(2.5e-3);
  resumed.Measured(again, left, measured, agent_);
  ASSERT_EQ(again.stored.state, proto::SUCCEEDED);
  proto::JobStatus status = resumed.StatusOf(again);
  EXPECT_EQ(status.best_figure(), "validated");
  EXPECT_DOUBLE_EQ(status.best_cost_s(), 2.1e-3);
}

TEST(PlanValidationTest, NothingToValidateWhenOffOrNothingSucceeded) {
  SchedulerParts parts;
  Job& off = parts.SubmitJob(2, "cpu", 1, /*validate_top_k=*/0);
  Trial t;
  t.done = true;
  t.result.add_costs(1e-3);
  off.trials.emplace(0, t);
  EXPECT_TRUE(PlanValidation(off, 1, 0).empty());
  Job& failed = parts.SubmitJob(2, "cpu", 1, /*validate_top_k=*/5);
  t.result.set_error_no(static_cast<int>(MeasureErrorNo::kRuntimeDevice));
  failed.trials.emplace(0, t);
  EXPECT_TRUE(PlanValidation(failed, 1, 0).empty());
}

}  // namespace
}  // namespace tunefleet
