#include "tracker/scheduler.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tracker/fake_metrics.h"
#include "tracker/fake_outbox.h"
#include "tracker/lease_tokens.h"
#include "tracker/store/failing_store.h"
#include "tracker/store/memory_store.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {
namespace {

proto::ExportRecordsRequest ExportOf(const std::string& job_id) {
  proto::ExportRecordsRequest request;
  request.set_job_id(job_id);
  return request;
}

using ::testing::HasSubstr;

struct FakeWorker {
  std::string id;
  std::shared_ptr<FakeOutbox> outbox = std::make_shared<FakeOutbox>();
};

constexpr char kArgs[] = R"({"M":32,"N":32,"K":32,"layout":"NK"})";

proto::JobSpec DenseJob(int64_t n_trial, const std::string& key = "cpu") {
  proto::JobSpec spec;
  spec.set_device_key(key);
  spec.mutable_task()->set_workload_name("dense");
  spec.mutable_task()->set_workload_args_json(kArgs);
  spec.mutable_task()->set_target("llvm");
  spec.set_tuner("random");
  spec.set_n_trial(n_trial);
  spec.set_validate_top_k(0);  // validation: trial_lifecycle_test, tests/
  return spec;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  void Restart() {
    SchedulerOptions options;
    options.worker_timeout_s = 5;
    scheduler_ = std::move(Scheduler::Create(&store_, &metrics_, options, &clock_)).value();
  }

  FakeWorker Register(proto::WorkerRole role, const std::string& name, const std::string& key = "",
                      int parallelism = 1, const std::string& peer = "test") {
    FakeWorker w;
    proto::Register r;
    r.set_role(role);
    r.set_name(name);
    r.set_device_key(key);
    r.set_parallelism(parallelism);
    absl::StatusOr<std::string> id = scheduler_->RegisterWorker(r, peer, w.outbox);
    EXPECT_TRUE(id.ok()) << id.status();
    w.id = id.value_or("");
    EXPECT_EQ(w.outbox->Take(proto::TrackerMessage::kRegistered).size(), 1u);
    return w;
  }

  std::string ConfigJson(int64_t index) {
    auto task = Task::Make("", "dense", nlohmann::json::parse(kArgs), "llvm").value();
    return task->space().Get(index).value().ToJson().dump();
  }

  void Propose(FakeWorker& tuner, const std::string& job_id, const std::vector<int64_t>& indices,
               bool finished = false) {
    proto::WorkerMessage m;
    m.mutable_propose()->set_job_id(job_id);
    for (int64_t i : indices) {
      proto::ProposedConfig* c = m.mutable_propose()->add_configs();
      c->set_config_json(ConfigJson(i));
      c->set_config_index(i);
    }
    m.mutable_propose()->set_finished(finished);
    scheduler_->OnMessage(tuner.id, m);
  }

  // Answers every build request the builder holds with a fake artifact.
  int CompleteBuilds(FakeWorker& builder, int error_no = 0) {
    auto builds = builder.outbox->Take(proto::TrackerMessage::kBuild);
    for (const auto& b : builds) {
      proto::WorkerMessage m;
      proto::BuildResult* r = m.mutable_build_result();
      r->set_lease_id(b.build().lease_id());
      r->set_error_no(error_no);
      if (error_no == 0) {
        r->set_shared_object("ELF" + b.build().config_json());
        r->set_entry_name("kernel");
        r->set_artifact_hash("hash-" + std::to_string(b.build().trial_id()) + "-" +
                             b.build().job_id());
      } else {
        r->set_error_msg("bad config");
      }
      r->set_build_seconds(0.05);
      scheduler_->OnMessage(builder.id, m);
    }
    return static_cast<int>(builds.size());
  }

  // An agent's answer to measure lease `lease_id`: two costs of `cost`.
  static proto::WorkerMessage MeasureResultFor(const std::string& lease_id, double cost) {
    proto::WorkerMessage m;
    m.mutable_measure_result()->set_lease_id(lease_id);
    m.mutable_measure_result()->mutable_run()->add_costs(cost);
    m.mutable_measure_result()->mutable_run()->add_costs(cost);
    m.mutable_measure_result()->set_measure_seconds(0.01);
    return m;
  }

  // Answers every measure request the agent holds with `cost`.
  std::vector<proto::MeasureRequest> CompleteMeasures(FakeWorker& agent, double cost = 1e-3) {
    std::vector<proto::MeasureRequest> done;
    auto requests = agent.outbox->Take(proto::TrackerMessage::kMeasure);
    for (const auto& q : requests) {
      scheduler_->OnMessage(agent.id, MeasureResultFor(q.measure().lease_id(), cost));
      done.push_back(q.measure());
    }
    return done;
  }

  FakeClock clock_{/*start_nanos=*/100'000'000'000};
  FailingStore store_;
  FakeTrackerMetrics metrics_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulerTest, AcceptsCudaTargets) {
  proto::JobSpec spec = DenseJob(10);
  spec.mutable_task()->set_target("cuda -mcpu=sm_90 -max_threads_per_block=1024");
  absl::StatusOr<proto::JobStatus> job = scheduler_->SubmitJob(spec);
  EXPECT_TRUE(job.ok()) << job.status();
}

TEST_F(SchedulerTest, RejectsBadJobsWithReasons) {
  proto::JobSpec spec = DenseJob(10);
  spec.mutable_task()->set_workload_name("conv9d");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("conv9d"));
  spec = DenseJob(10);
  spec.mutable_task()->set_workload_args_json("{not json");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("not valid JSON"));
  spec = DenseJob(10);
  spec.mutable_task()->set_target("opencl -device=mali");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("unsupported target"));
  spec = DenseJob(10);
  spec.mutable_task()->set_target("cuda");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("needs -mcpu=sm_NN"));
  spec = DenseJob(10);
  spec.mutable_task()->set_target("cuda -arch=volta");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("needs sm_NN"));
  spec = DenseJob(10);
  spec.mutable_task()->set_target("cuda -mcpu=sm_90 -max_threads_per_block=0");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("positive integer"));

  spec = DenseJob(10);
  spec.mutable_task()->set_target("llvm -mtriple=riscv64-linux");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("riscv64"));
  spec = DenseJob(10);
  spec.set_tuner("oracle");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(),
              HasSubstr("unknown tuner \"oracle\""));
  EXPECT_EQ(scheduler_->SubmitJob(DenseJob(0)).status().code(), absl::StatusCode::kInvalidArgument);
  spec = DenseJob(10);
  spec.set_device_key("");
  EXPECT_THAT(scheduler_->SubmitJob(spec).status().message(), HasSubstr("device_key"));
  EXPECT_TRUE(scheduler_->ListJobs(true).empty());
}

TEST_F(SchedulerTest, RunsAJobThroughBuildAndMeasure) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 4);
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(3)).value();
  auto assignments = tuner.outbox->Take(proto::TrackerMessage::kAssignment);
  ASSERT_EQ(assignments.size(), 1u);
  EXPECT_EQ(assignments[0].assignment().job_id(), job.job_id());
  EXPECT_EQ(assignments[0].assignment().trials_size(), 0);

  Propose(tuner, job.job_id(), {5, 7, 9});
  auto accepted = tuner.outbox->Take(proto::TrackerMessage::kAccepted);
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].accepted().trial_ids_size(), 3);
  EXPECT_EQ(CompleteBuilds(builder), 3);
  // One measurement at a time per agent.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(CompleteMeasures(agent).size(), 1u);
  EXPECT_EQ(tuner.outbox->Take(proto::TrackerMessage::kTrialUpdate).size(), 3u);
  EXPECT_EQ(tuner.outbox->Take(proto::TrackerMessage::kReleased).size(), 1u);

  proto::JobStatus done = scheduler_->GetJob(job.job_id()).value();
  EXPECT_EQ(done.state(), proto::SUCCEEDED);
  EXPECT_EQ(done.trials_done(), 3);
  EXPECT_GT(done.best_gflops(), 0);
  std::vector<std::string> records = scheduler_->ExportRecords(ExportOf(job.job_id())).value();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_THAT(records[0], HasSubstr("\"dense\""));
  proto::BestConfigRequest best;
  best.set_job_id(job.job_id());
  EXPECT_GT(scheduler_->BestConfig(best).value().gflops(), 0);
  EXPECT_EQ(metrics_.trials_finished(0), 3);
}

TEST_F(SchedulerTest, RefusesProposalsOutsideTheSpaceOrBeyondNTrial) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  tuner.outbox->Take(proto::TrackerMessage::kAssignment);
  proto::WorkerMessage m;
  m.mutable_propose()->set_job_id(job.job_id());
  proto::ProposedConfig* bad = m.mutable_propose()->add_configs();
  bad->set_config_json(R"({"index": 0, "code_hash": null, "entity": [["no_such_knob", "ot", 3]]})");
  bad->set_config_index(0);
  scheduler_->OnMessage(tuner.id, m);
  auto accepted = tuner.outbox->Take(proto::TrackerMessage::kAccepted);
  ASSERT_EQ(accepted.size(), 1u);
  ASSERT_EQ(accepted[0].accepted().rejected_size(), 1);
  EXPECT_THAT(accepted[0].accepted().rejected(0), HasSubstr("outside the space"));

  Propose(tuner, job.job_id(), {1, 1, 2, 3});
  accepted = tuner.outbox->Take(proto::TrackerMessage::kAccepted);
  EXPECT_EQ(accepted[0].accepted().trial_ids_size(), 2);
  ASSERT_EQ(accepted[0].accepted().rejected_size(), 2);
  EXPECT_THAT(accepted[0].accepted().rejected(0), HasSubstr("already proposed"));
  EXPECT_THAT(accepted[0].accepted().rejected(1), HasSubstr("all 2 trials"));
}

TEST_F(SchedulerTest, ResultForALeaseNotHeldIsAnError) {
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::WorkerMessage m;
  m.mutable_measure_result()->set_lease_id("L999");
  scheduler_->OnMessage(agent.id, m);
  auto errors = agent.outbox->Take(proto::TrackerMessage::kError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].error().message(), HasSubstr("L999"));
  EXPECT_FALSE(errors[0].error().fatal());
  // A builder result from an agent is refused too.
  proto::WorkerMessage b;
  b.mutable_build_result()->set_lease_id("L1");
  scheduler_->OnMessage(agent.id, b);
  EXPECT_EQ(agent.outbox->Take(proto::TrackerMessage::kError).size(), 1u);
}

TEST_F(SchedulerTest, DuplicateWorkerNameIsRefusedWhileAlive) {
  Register(proto::AGENT, "agent", "cpu");
  proto::Register r;
  r.set_role(proto::AGENT);
  r.set_name("agent");
  r.set_device_key("cpu");
  auto outbox = std::make_shared<FakeOutbox>();
  EXPECT_EQ(scheduler_->RegisterWorker(r, "test", outbox).status().code(),
            absl::StatusCode::kAlreadyExists);
  // Once the old session has gone quiet, the new one replaces it.
  clock_.AdvanceSeconds(4);
  EXPECT_TRUE(scheduler_->RegisterWorker(r, "test", outbox).ok());
  EXPECT_EQ(scheduler_->ListDevices().workers_size(), 1);
}

TEST_F(SchedulerTest, LostAgentsWorkIsRequeuedAndDoneExactlyOnce) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 2);
  FakeWorker a1 = Register(proto::AGENT, "a1", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  Propose(tuner, job.job_id(), {1, 2});
  CompleteBuilds(builder);
  auto held = a1.outbox->Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(held.size(), 1u);
  scheduler_->OnDisconnect(a1.id, absl::UnavailableError("killed"));
  FakeWorker a2 = Register(proto::AGENT, "a2", "cpu");
  // The requeued trial goes first, with its artifact bytes (a2 never saw it).
  auto requests = CompleteMeasures(a2);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].trial_id(), held[0].measure().trial_id());
  EXPECT_FALSE(requests[0].run().shared_object().empty());
  CompleteMeasures(a2);
  // The dead agent's late result is refused, not counted.
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);
  EXPECT_EQ(scheduler_->ExportRecords(ExportOf(job.job_id()))->size(), 2u);
  EXPECT_EQ(tuner.outbox->Take(proto::TrackerMessage::kTrialUpdate).size(), 2u);
}

TEST_F(SchedulerTest, GivesUpAfterMaxAttemptsWithAReason) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  proto::JobSpec spec = DenseJob(1);
  spec.set_max_attempts(2);
  proto::JobStatus job = scheduler_->SubmitJob(spec).value();
  Propose(tuner, job.job_id(), {4});
  for (int i = 0; i < 2; ++i) {
    FakeWorker agent = Register(proto::AGENT, "agent-" + std::to_string(i), "cpu");
    if (i == 0) CompleteBuilds(builder);
    ASSERT_EQ(agent.outbox->Take(proto::TrackerMessage::kMeasure).size(), 1u);
    scheduler_->OnDisconnect(agent.id, absl::UnavailableError("kill -9"));
  }
  proto::JobStatus status = scheduler_->GetJob(job.job_id()).value();
  EXPECT_EQ(status.state(), proto::FAILED);  // its only trial never ran
  EXPECT_THAT(status.message(), HasSubstr("every trial failed"));
  EXPECT_EQ(status.trials_failed(), 1);
  auto updates = tuner.outbox->Take(proto::TrackerMessage::kTrialUpdate);
  ASSERT_EQ(updates.size(), 1u);
  // An infrastructure outcome (UNKNOWN_ERROR, marked): not the config's fault.
  EXPECT_EQ(updates[0].trial_update().result().error_no(), 8);
  EXPECT_TRUE(updates[0].trial_update().result().infrastructure());
  EXPECT_THAT(updates[0].trial_update().result().error_msg(), HasSubstr("after 2 attempts"));
  EXPECT_THAT(updates[0].trial_update().result().error_msg(), HasSubstr("kill -9"));
}

TEST_F(SchedulerTest, SilentWorkerIsDroppedOnTick) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(1)).value();
  Propose(tuner, job.job_id(), {3});
  ASSERT_EQ(builder.outbox->sent.size(), 1u);
  clock_.AdvanceSeconds(6);
  proto::WorkerMessage hb;
  hb.mutable_heartbeat();
  scheduler_->OnMessage(tuner.id, hb);
  scheduler_->Tick();
  ASSERT_TRUE(builder.outbox->closed.has_value());
  EXPECT_THAT(builder.outbox->closed->message(), HasSubstr("silent"));
  // Its build goes to the next builder.
  FakeWorker b2 = Register(proto::BUILDER, "builder2");
  EXPECT_EQ(b2.outbox->Take(proto::TrackerMessage::kBuild).size(), 1u);
}

TEST_F(SchedulerTest, AStalledTrackerChargesNoWorkerForItsOwnPause) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(1)).value();
  Propose(tuner, job.job_id(), {3});
  CompleteBuilds(builder);
  ASSERT_EQ(agent.outbox->Take(proto::TrackerMessage::kMeasure).size(), 1u);
  scheduler_->Tick();
  // The tracker stops for longer than the worker timeout and the measure
  // lease (e.g. SIGSTOP, a suspended VM): nobody was heard meanwhile.
  clock_.AdvanceSeconds(400);
  scheduler_->Tick();
  EXPECT_FALSE(agent.outbox->closed.has_value()) << agent.outbox->closed->message();
  EXPECT_FALSE(builder.outbox->closed.has_value());
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->trials_in_flight(), 1);
  // It still notices a worker that stays silent once it runs again.
  for (int i = 0; i < 120; ++i) {
    clock_.AdvanceSeconds(0.1);
    proto::WorkerMessage hb;
    hb.mutable_heartbeat();
    scheduler_->OnMessage(agent.id, hb);
    scheduler_->OnMessage(tuner.id, hb);
    scheduler_->Tick();
  }
  ASSERT_TRUE(builder.outbox->closed.has_value());
  EXPECT_THAT(builder.outbox->closed->message(), HasSubstr("silent"));
  EXPECT_FALSE(agent.outbox->closed.has_value());
}

TEST_F(SchedulerTest, JobsOnOneKeyShareItByPriority) {
  FakeWorker tuner = Register(proto::TUNER, "tuner", "", 2);
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 64);
  proto::JobSpec low = DenseJob(20);
  proto::JobSpec high = DenseJob(20);
  high.set_priority(3);
  std::string j1 = scheduler_->SubmitJob(low)->job_id();
  std::string j2 = scheduler_->SubmitJob(high)->job_id();
  std::vector<int64_t> configs;
  for (int i = 0; i < 20; ++i) configs.push_back(i);
  Propose(tuner, j1, configs);
  Propose(tuner, j2, configs);
  CompleteBuilds(builder);
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  std::map<std::string, int> served;
  for (int i = 0; i < 16; ++i) {
    for (const auto& r : CompleteMeasures(agent)) ++served[r.job_id()];
  }
  EXPECT_EQ(served[j1] + served[j2], 16);
  EXPECT_EQ(served[j2], 12);  // 3:1
  EXPECT_EQ(served[j1], 4);
}

TEST_F(SchedulerTest, JobForAKeyWithNoDeviceIsPendingNotAnError) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 2);
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2, "rk3399")).value();
  Propose(tuner, job.job_id(), {1, 2});
  CompleteBuilds(builder);
  proto::QueueSummaryResponse q = scheduler_->QueueSummary();
  ASSERT_EQ(q.keys_size(), 1);
  EXPECT_EQ(q.keys(0).device_key(), "rk3399");
  EXPECT_EQ(q.keys(0).total(), 0);
  EXPECT_EQ(q.keys(0).pending(), 2);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::RUNNING);
}

TEST_F(SchedulerTest, CancelReleasesTheTunerAndDropsQueuedWork) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(5)).value();
  Propose(tuner, job.job_id(), {1, 2});
  EXPECT_EQ(scheduler_->CancelJob(job.job_id())->state(), proto::CANCELLED);
  EXPECT_EQ(tuner.outbox->Take(proto::TrackerMessage::kReleased).size(), 1u);
  FakeWorker builder = Register(proto::BUILDER, "builder");
  EXPECT_TRUE(builder.outbox->Take(proto::TrackerMessage::kBuild).empty());
  EXPECT_EQ(scheduler_->CancelJob("job-77").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SchedulerTest, CancelAbortsTheMeasurementInFlight) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  Propose(tuner, job.job_id(), {3});
  CompleteBuilds(builder);
  std::vector<proto::TrackerMessage> measures = agent.outbox->Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(measures.size(), 1u);
  ASSERT_EQ(scheduler_->CancelJob(job.job_id())->state(), proto::CANCELLED);
  std::vector<proto::TrackerMessage> aborts =
      agent.outbox->Take(proto::TrackerMessage::kAbortMeasure);
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0].abort_measure().lease_id(), measures[0].measure().lease_id());
  EXPECT_THAT(aborts[0].abort_measure().reason(), HasSubstr("cancelled"));
  // The agent's answer ends the lease; the agent is free for other work.
  proto::WorkerMessage answer;
  answer.mutable_measure_result()->set_lease_id(measures[0].measure().lease_id());
  answer.mutable_measure_result()->mutable_run()->set_error_no(8);
  answer.mutable_measure_result()->mutable_run()->set_error_msg("aborted: job cancelled");
  scheduler_->OnMessage(agent.id, answer);
  proto::JobStatus other = scheduler_->SubmitJob(DenseJob(1)).value();
  Propose(tuner, other.job_id(), {4});
  CompleteBuilds(builder);
  EXPECT_EQ(agent.outbox->Take(proto::TrackerMessage::kMeasure).size(), 1u);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::CANCELLED);
}

TEST_F(SchedulerTest, RestartResumesFromTheStore) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 4);
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(4)).value();
  Propose(tuner, job.job_id(), {1, 2, 3});
  CompleteBuilds(builder);
  CompleteMeasures(agent);  // trial 0 done; 1 measuring; 2 built
  Restart();                // the tracker "crashed"
  FakeWorker tuner2 = Register(proto::TUNER, "tuner");
  auto assignments = tuner2.outbox->Take(proto::TrackerMessage::kAssignment);
  ASSERT_EQ(assignments.size(), 1u);
  const proto::JobAssignment& a = assignments[0].assignment();
  ASSERT_EQ(a.trials_size(), 3);
  int done = 0;
  for (const auto& t : a.trials()) done += t.done();
  EXPECT_EQ(done, 1);
  Propose(tuner2, job.job_id(), {4});
  FakeWorker builder2 = Register(proto::BUILDER, "builder", "", 4);
  EXPECT_EQ(CompleteBuilds(builder2), 3);  // 2 unfinished + 1 new
  FakeWorker agent2 = Register(proto::AGENT, "agent", "cpu");
  for (int i = 0; i < 3; ++i) CompleteMeasures(agent2);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);
  std::vector<std::string> records = scheduler_->ExportRecords(ExportOf(job.job_id())).value();
  EXPECT_EQ(records.size(), 4u);
}

// A takeover (or restart) while an agent measures: the new tracker adopts
// the result, its lease id signed with the store's lease key for that agent,
// instead of building and measuring the trial again; the trial is counted
// once, and a resent result is ignored without a scolding.
TEST_F(SchedulerTest, AMeasurementOfAnEarlierTrackersLeaseIsAdoptedOnce) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 4);
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(3)).value();
  Propose(tuner, job.job_id(), {1, 2, 3});
  ASSERT_EQ(CompleteBuilds(builder), 3);
  auto measures = agent.outbox->Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(measures.size(), 1u);
  const proto::MeasureRequest measuring = measures[0].measure();

  Restart();  // the leader died; its successor resumes from the store
  FakeWorker agent2 = Register(proto::AGENT, "agent", "cpu");
  const proto::WorkerMessage measured = MeasureResultFor(measuring.lease_id(), 2e-3);
  scheduler_->OnMessage(agent2.id, measured);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->trials_done(), 1);
  EXPECT_EQ(metrics_.adopted(/*build=*/false), 1);
  scheduler_->OnMessage(agent2.id, measured);  // resent after a reconnect
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->trials_done(), 1);
  EXPECT_EQ(metrics_.adopted(/*build=*/false), 1);
  EXPECT_TRUE(agent2.outbox->Take(proto::TrackerMessage::kError).empty());

  // The other two are built and measured again; the adopted one is not.
  FakeWorker builder2 = Register(proto::BUILDER, "builder", "", 4);
  EXPECT_EQ(CompleteBuilds(builder2), 2);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(CompleteMeasures(agent2).size(), 1u);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);
  std::vector<std::string> records = scheduler_->ExportRecords(ExportOf(job.job_id())).value();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_THAT(records[measuring.trial_id()], HasSubstr("0.002"));
}

// The new tracker had already built the trial again and given its
// measurement to the same agent when the earlier result arrived: that lease
// is revoked (the agent is told to stop), the agent's answer to it frees the
// agent for the next trial and counts for nothing.
TEST_F(SchedulerTest, AnAdoptedResultRevokesTheNewLeaseAndItsAgentIsFreedByItsAnswer) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 4, "build-host");
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  Propose(tuner, job.job_id(), {1, 2});
  ASSERT_EQ(CompleteBuilds(builder), 2);
  auto old_measures = agent.outbox->Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(old_measures.size(), 1u);
  const proto::MeasureRequest earlier = old_measures[0].measure();

  Restart();
  FakeWorker builder2 = Register(proto::BUILDER, "builder", "", 4, "build-host");
  FakeWorker agent2 = Register(proto::AGENT, "agent", "cpu");
  ASSERT_EQ(CompleteBuilds(builder2), 2);
  auto measures = agent2.outbox->Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(measures.size(), 1u);
  ASSERT_EQ(measures[0].measure().trial_id(), earlier.trial_id());  // the same trial again

  scheduler_->OnMessage(agent2.id, MeasureResultFor(earlier.lease_id(), 3e-3));
  auto aborts = agent2.outbox->Take(proto::TrackerMessage::kAbortMeasure);
  ASSERT_EQ(aborts.size(), 1u);
  EXPECT_EQ(aborts[0].abort_measure().lease_id(), measures[0].measure().lease_id());
  EXPECT_TRUE(agent2.outbox->Take(proto::TrackerMessage::kMeasure).empty());  // still busy

  proto::WorkerMessage aborted;  // the agent stopped: its answer to the revoked lease
  aborted.mutable_measure_result()->set_lease_id(measures[0].measure().lease_id());
  aborted.mutable_measure_result()->mutable_run()->set_error_no(
      static_cast<int>(MeasureErrorNo::kRunTimeout));
  scheduler_->OnMessage(agent2.id, aborted);
  EXPECT_TRUE(agent2.outbox->Take(proto::TrackerMessage::kError).empty());
  EXPECT_EQ(CompleteMeasures(agent2).size(), 1u);  // freed: the other trial
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);
  std::vector<std::string> records = scheduler_->ExportRecords(ExportOf(job.job_id())).value();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_THAT(records[earlier.trial_id()], HasSubstr("0.003"));
}

// The same for a build in flight, which the trial's measurement follows;
// a lease id claimed by another worker, altered, or signed with another
// store's key is refused.
TEST_F(SchedulerTest, ABuildOfAnEarlierTrackersLeaseIsAdoptedOnlyFromItsWorker) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 4, "build-host");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  Propose(tuner, job.job_id(), {1, 2});
  auto builds = builder.outbox->Take(proto::TrackerMessage::kBuild);
  ASSERT_EQ(builds.size(), 2u);

  Restart();
  FakeWorker builder2 = Register(proto::BUILDER, "builder", "", 1, "build-host");
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  auto rebuilding = builder2.outbox->Take(proto::TrackerMessage::kBuild);
  ASSERT_EQ(rebuilding.size(), 1u);  // trial 0, built again
  proto::WorkerMessage built;
  built.mutable_build_result()->set_shared_object("ELF");
  built.mutable_build_result()->set_entry_name("kernel");
  built.mutable_build_result()->set_artifact_hash("hash");
  // Not adopted: trial 1's lease claimed by another worker, altered, or
  // signed with another store's key.
  FakeWorker stranger = Register(proto::BUILDER, "stranger", "", 1, "build-host");
  built.mutable_build_result()->set_lease_id(builds[1].build().lease_id());
  scheduler_->OnMessage(stranger.id, built);
  std::string altered = builds[1].build().lease_id();
  altered[altered.find('.') + 3] = '9';  // the trial id
  built.mutable_build_result()->set_lease_id(altered);
  scheduler_->OnMessage(builder2.id, built);
  MemoryStore other;
  LeaseTokens foreign = LeaseTokens::FromHexKey(other.LeaseKey().value()).value();
  built.mutable_build_result()->set_lease_id(
      foreign.Mint({job.job_id(), builds[1].build().trial_id(), Stage::kBuild}, "builder"));
  scheduler_->OnMessage(builder2.id, built);
  EXPECT_EQ(metrics_.adopted(/*build=*/true), 0);
  EXPECT_EQ(stranger.outbox->Take(proto::TrackerMessage::kError).size(), 1u);
  auto errors = builder2.outbox->Take(proto::TrackerMessage::kError);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_THAT(errors[1].error().message(), HasSubstr("signature does not match"));
  EXPECT_TRUE(agent.outbox->Take(proto::TrackerMessage::kMeasure).empty());

  // From the builder that held it: measured next, not built again.
  built.mutable_build_result()->set_lease_id(builds[1].build().lease_id());
  scheduler_->OnMessage(builder2.id, built);
  EXPECT_EQ(metrics_.adopted(/*build=*/true), 1);
  auto measures = agent.outbox->Take(proto::TrackerMessage::kMeasure);
  ASSERT_EQ(measures.size(), 1u);
  EXPECT_EQ(measures[0].measure().trial_id(), builds[1].build().trial_id());
  scheduler_->OnMessage(agent.id, MeasureResultFor(measures[0].measure().lease_id(), 1e-3));
  built.mutable_build_result()->set_lease_id(rebuilding[0].build().lease_id());
  scheduler_->OnMessage(builder2.id, built);
  EXPECT_EQ(CompleteMeasures(agent).size(), 1u);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);
  EXPECT_EQ(scheduler_->ExportRecords(ExportOf(job.job_id())).value().size(), 2u);
}

TEST_F(SchedulerTest, OneHostNeverBuildsWhileItMeasures) {
  // All fake workers share the peer "test", i.e. one host.
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 2);
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(4)).value();
  Propose(tuner, job.job_id(), {1, 2, 3});
  auto builds = builder.outbox->Take(proto::TrackerMessage::kBuild);
  ASSERT_EQ(builds.size(), 2u);
  // One build done, one still running: no measurement starts yet.
  proto::WorkerMessage m;
  m.mutable_build_result()->set_lease_id(builds[0].build().lease_id());
  m.mutable_build_result()->set_shared_object("ELF");
  m.mutable_build_result()->set_entry_name("kernel");
  m.mutable_build_result()->set_artifact_hash("h0");
  scheduler_->OnMessage(builder.id, m);
  EXPECT_TRUE(agent.outbox->Take(proto::TrackerMessage::kMeasure).empty());
  // The third build waits too: a built trial is waiting for the free agent.
  EXPECT_TRUE(builder.outbox->Take(proto::TrackerMessage::kBuild).empty());
  m.mutable_build_result()->set_lease_id(builds[1].build().lease_id());
  m.mutable_build_result()->set_artifact_hash("h1");
  scheduler_->OnMessage(builder.id, m);
  // No build in flight: the agent measures, and nothing builds meanwhile.
  EXPECT_EQ(CompleteMeasures(agent).size(), 1u);
  EXPECT_TRUE(builder.outbox->Take(proto::TrackerMessage::kBuild).empty());
  EXPECT_EQ(CompleteMeasures(agent).size(), 1u);
  // Nothing left to measure: building resumes.
  EXPECT_EQ(builder.outbox->Take(proto::TrackerMessage::kBuild).size(), 1u);
}

TEST_F(SchedulerTest, AgentsOnOtherHostsOverlapBuildsAndMeasurements) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 2);
  proto::Register r;
  r.set_role(proto::AGENT);
  r.set_name("remote-agent");
  r.set_device_key("cpu");
  FakeWorker remote;
  remote.id = scheduler_->RegisterWorker(r, "ipv4:10.0.0.7:4000", remote.outbox).value();
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(4)).value();
  Propose(tuner, job.job_id(), {1, 2, 3});
  auto builds = builder.outbox->Take(proto::TrackerMessage::kBuild);
  ASSERT_EQ(builds.size(), 2u);
  proto::WorkerMessage m;
  m.mutable_build_result()->set_lease_id(builds[0].build().lease_id());
  m.mutable_build_result()->set_shared_object("ELF");
  m.mutable_build_result()->set_entry_name("kernel");
  m.mutable_build_result()->set_artifact_hash("h0");
  scheduler_->OnMessage(builder.id, m);
  // The agent is on another host: it measures while the builder builds.
  EXPECT_EQ(remote.outbox->Take(proto::TrackerMessage::kMeasure).size(), 1u);
  EXPECT_EQ(builder.outbox->Take(proto::TrackerMessage::kBuild).size(), 1u);
}

TEST_F(SchedulerTest, BuildErrorsEndTheTrialWithTheBuildersReason) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(1)).value();
  Propose(tuner, job.job_id(), {1});
  CompleteBuilds(builder, /*error_no=*/1);
  auto updates = tuner.outbox->Take(proto::TrackerMessage::kTrialUpdate);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].trial_update().result().error_no(), 1);
  EXPECT_EQ(updates[0].trial_update().result().error_msg(), "bad config");
  // Its one trial failed: the job did not succeed, and says why.
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::FAILED);
  EXPECT_THAT(scheduler_->GetJob(job.job_id())->message(), HasSubstr("bad config"));
}

TEST_F(SchedulerTest, TunerEndingTheSearchFinishesTheJobWhenTheWindowDrains) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(10)).value();
  Propose(tuner, job.job_id(), {1}, /*finished=*/true);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::RUNNING);
  CompleteBuilds(builder);
  CompleteMeasures(agent);
  proto::JobStatus status = scheduler_->GetJob(job.job_id()).value();
  EXPECT_EQ(status.state(), proto::SUCCEEDED);
  EXPECT_EQ(status.trials_done(), 1);
}

TEST_F(SchedulerTest, WatchersSeeEveryTrialAndTheEnd) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 2);
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  std::vector<proto::JobEvent> events;
  ASSERT_TRUE(scheduler_
                  ->WatchJob(job.job_id(),
                             [&](const proto::JobEvent& e) {
                               events.push_back(e);
                               return true;
                             })
                  .ok());
  Propose(tuner, job.job_id(), {1, 2});
  CompleteBuilds(builder);
  CompleteMeasures(agent);
  CompleteMeasures(agent);
  ASSERT_EQ(events.size(), 4u);  // initial, 2 trials, end
  EXPECT_EQ(events[0].trial_id(), -1);
  EXPECT_GE(events[1].trial_id(), 0);
  EXPECT_EQ(events[3].status().state(), proto::SUCCEEDED);
}

// ---------------------------------------------------------------- store failures

TEST_F(SchedulerTest, ResultTheStoreRefusesIsNotAcknowledgedUntilItIsStored) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(1)).value();
  std::vector<proto::JobEvent> events;
  ASSERT_TRUE(scheduler_
                  ->WatchJob(job.job_id(),
                             [&](const proto::JobEvent& e) {
                               events.push_back(e);
                               return true;
                             })
                  .ok());
  Propose(tuner, job.job_id(), {2});
  CompleteBuilds(builder);
  store_.FailWrites(absl::UnavailableError("disk full"));
  ASSERT_EQ(CompleteMeasures(agent).size(), 1u);
  // Nobody hears of the result: not the tuner, not the watcher, not the counters.
  EXPECT_TRUE(tuner.outbox->Take(proto::TrackerMessage::kTrialUpdate).empty());
  EXPECT_EQ(events.size(), 1u);  // the initial status only
  EXPECT_EQ(metrics_.trials_finished(0), 0);
  proto::JobStatus status = scheduler_->GetJob(job.job_id()).value();
  EXPECT_EQ(status.state(), proto::RUNNING);
  EXPECT_EQ(status.trials_done(), 0);
  EXPECT_THAT(status.message(), HasSubstr("store write failed"));
  EXPECT_THAT(status.message(), HasSubstr("disk full"));
  scheduler_->Tick();  // still failing: still nothing
  EXPECT_TRUE(tuner.outbox->Take(proto::TrackerMessage::kTrialUpdate).empty());

  store_.FailWrites(absl::OkStatus());
  scheduler_->Tick();
  auto updates = tuner.outbox->Take(proto::TrackerMessage::kTrialUpdate);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].trial_update().result().error_no(), 0);
  status = scheduler_->GetJob(job.job_id()).value();
  EXPECT_EQ(status.state(), proto::SUCCEEDED);
  EXPECT_EQ(status.trials_done(), 1);
  EXPECT_EQ(scheduler_->ExportRecords(ExportOf(job.job_id()))->size(), 1u);
  EXPECT_EQ(metrics_.trials_finished(0), 1);
}

TEST_F(SchedulerTest, ProposalTheStoreRefusesIsRejectedWithTheReason) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(3)).value();
  store_.FailWrites(absl::UnavailableError("disk full"));
  Propose(tuner, job.job_id(), {1, 2});
  auto accepted = tuner.outbox->Take(proto::TrackerMessage::kAccepted);
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0].accepted().trial_ids_size(), 0);
  ASSERT_EQ(accepted[0].accepted().rejected_size(), 2);
  EXPECT_THAT(accepted[0].accepted().rejected(0), HasSubstr("store write failed"));
  EXPECT_TRUE(builder.outbox->Take(proto::TrackerMessage::kBuild).empty());
}

TEST_F(SchedulerTest, JobIsNotAssignedWhileTheStoreRefusesRunning) {
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  store_.FailWrites(absl::UnavailableError("database is locked"));
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  EXPECT_TRUE(tuner.outbox->Take(proto::TrackerMessage::kAssignment).empty());
  proto::JobStatus status = scheduler_->GetJob(job.job_id()).value();
  EXPECT_EQ(status.state(), proto::QUEUED);
  EXPECT_THAT(status.message(), HasSubstr("database is locked"));
  store_.FailWrites(absl::OkStatus());
  scheduler_->Tick();
  EXPECT_EQ(tuner.outbox->Take(proto::TrackerMessage::kAssignment).size(), 1u);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::RUNNING);
}

TEST_F(SchedulerTest, CancelTheStoreRefusesFailsAndChangesNothing) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  store_.FailWrites(absl::UnavailableError("disk full"));
  absl::StatusOr<proto::JobStatus> cancelled = scheduler_->CancelJob(job.job_id());
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(cancelled.status().message(), HasSubstr("store write failed"));
  EXPECT_TRUE(tuner.outbox->Take(proto::TrackerMessage::kReleased).empty());
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::RUNNING);
}

TEST_F(SchedulerTest, RequeueWaitsForTheStoreBeforeTheTrialIsLeasedAgain) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  FakeWorker a1 = Register(proto::AGENT, "a1", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(1)).value();
  Propose(tuner, job.job_id(), {3});
  CompleteBuilds(builder);
  ASSERT_EQ(a1.outbox->Take(proto::TrackerMessage::kMeasure).size(), 1u);
  store_.FailWrites(absl::UnavailableError("disk full"));
  scheduler_->OnDisconnect(a1.id, absl::UnavailableError("killed"));
  FakeWorker a2 = Register(proto::AGENT, "a2", "cpu");
  EXPECT_TRUE(a2.outbox->Take(proto::TrackerMessage::kMeasure).empty());
  EXPECT_THAT(scheduler_->GetJob(job.job_id())->message(), HasSubstr("store write failed"));
  store_.FailWrites(absl::OkStatus());
  scheduler_->Tick();
  EXPECT_EQ(CompleteMeasures(a2).size(), 1u);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);
}

TEST_F(SchedulerTest, FinishedJobTheStoreRefusesEndsOnALaterTick) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder");
  FakeWorker agent = Register(proto::AGENT, "agent", "cpu");
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(5)).value();
  Propose(tuner, job.job_id(), {1});
  CompleteBuilds(builder);
  CompleteMeasures(agent);
  // The tuner ends the search with nothing in flight; the store refuses SUCCEEDED.
  store_.FailWrites(absl::UnavailableError("disk full"));
  Propose(tuner, job.job_id(), {}, /*finished=*/true);
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::RUNNING);
  EXPECT_TRUE(tuner.outbox->Take(proto::TrackerMessage::kReleased).empty());
  store_.FailWrites(absl::OkStatus());
  scheduler_->Tick();
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);
  EXPECT_EQ(tuner.outbox->Take(proto::TrackerMessage::kReleased).size(), 1u);
}

// An agent that calibrates: registered, asked at once, answered.
FakeWorker RegisterCalibrating(Scheduler& scheduler, const std::string& name, double gflops,
                               double noise) {
  FakeWorker w;
  proto::Register r;
  r.set_role(proto::AGENT);
  r.set_name(name);
  r.set_device_key("cpu");
  r.set_calibrates(true);
  w.id = scheduler.RegisterWorker(r, "test", w.outbox).value();
  EXPECT_EQ(w.outbox->Take(proto::TrackerMessage::kCalibrate).size(), 1u);
  proto::WorkerMessage answer;
  answer.mutable_calibration()->set_gflops(gflops);
  answer.mutable_calibration()->set_noise(noise);
  scheduler.OnMessage(w.id, answer);
  return w;
}

TEST_F(SchedulerTest, AThrottledAgentIsQuarantinedAndGetsNoMeasurement) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker builder = Register(proto::BUILDER, "builder", "", 4);
  FakeWorker healthy = RegisterCalibrating(*scheduler_, "healthy", 30, 0.01);
  FakeWorker throttled = RegisterCalibrating(*scheduler_, "throttled", 14, 0.01);
  FakeWorker noisy = RegisterCalibrating(*scheduler_, "noisy", 30, 0.12);

  proto::ListDevicesResponse devices = scheduler_->ListDevices();
  std::map<std::string, proto::WorkerStatus> by_name;
  for (const proto::WorkerStatus& w : devices.workers()) by_name[w.name()] = w;
  EXPECT_EQ(by_name["healthy"].state(), "free");
  EXPECT_EQ(by_name["healthy"].calibration().gflops(), 30);
  EXPECT_EQ(by_name["throttled"].state(), "quarantined");
  EXPECT_THAT(by_name["throttled"].quarantine(), HasSubstr("slow: calibration 14.00 GFLOPS"));
  EXPECT_EQ(by_name["noisy"].state(), "quarantined");
  EXPECT_THAT(by_name["noisy"].quarantine(), HasSubstr("noisy: calibration spread 12.0 %"));

  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(4)).value();
  Propose(tuner, job.job_id(), {1, 2, 3, 4});
  CompleteBuilds(builder);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(CompleteMeasures(healthy).size(), 1u);
    EXPECT_TRUE(throttled.outbox->Take(proto::TrackerMessage::kMeasure).empty());
    EXPECT_TRUE(noisy.outbox->Take(proto::TrackerMessage::kMeasure).empty());
  }
  EXPECT_EQ(scheduler_->GetJob(job.job_id())->state(), proto::SUCCEEDED);

  // Past the recheck interval the quarantined agents are asked again (the
  // healthy one is not due); a passing figure puts the throttled one back.
  // Every worker keeps heartbeating meanwhile, and the tracker ticks.
  proto::WorkerMessage heartbeat;
  heartbeat.mutable_heartbeat();
  for (int s = 0; s <= SchedulerOptions().calibration.recheck_s; ++s) {
    clock_.AdvanceSeconds(1);
    for (const FakeWorker* w : {&tuner, &builder, &healthy, &throttled, &noisy}) {
      scheduler_->OnMessage(w->id, heartbeat);
    }
    scheduler_->Tick();
  }
  // Both are due; they share a host, so they calibrate one after the other
  // (and the host builds and measures nothing until both have).
  // (Equally overdue: by name, "noisy" first.)
  EXPECT_EQ(noisy.outbox->Take(proto::TrackerMessage::kCalibrate).size(), 1u);
  EXPECT_TRUE(throttled.outbox->Take(proto::TrackerMessage::kCalibrate).empty());
  EXPECT_TRUE(healthy.outbox->Take(proto::TrackerMessage::kCalibrate).empty());
  proto::WorkerMessage still_noisy;
  still_noisy.mutable_calibration()->set_gflops(30);
  still_noisy.mutable_calibration()->set_noise(0.2);
  scheduler_->OnMessage(noisy.id, still_noisy);
  EXPECT_EQ(throttled.outbox->Take(proto::TrackerMessage::kCalibrate).size(), 1u);
  proto::WorkerMessage recovered;
  recovered.mutable_calibration()->set_gflops(29);
  recovered.mutable_calibration()->set_noise(0.01);
  scheduler_->OnMessage(throttled.id, recovered);
  proto::JobStatus second = scheduler_->SubmitJob(DenseJob(2)).value();
  Propose(tuner, second.job_id(), {5, 6});
  CompleteBuilds(builder);
  EXPECT_EQ(CompleteMeasures(healthy).size() + CompleteMeasures(throttled).size(), 2u);
  EXPECT_TRUE(noisy.outbox->Take(proto::TrackerMessage::kMeasure).empty());
}

TEST_F(SchedulerTest, AJobWhoseAgentsAreAllQuarantinedSaysSo) {
  FakeWorker tuner = Register(proto::TUNER, "tuner");
  FakeWorker noisy = RegisterCalibrating(*scheduler_, "noisy", 30, 0.3);
  proto::JobStatus job = scheduler_->SubmitJob(DenseJob(2)).value();
  EXPECT_THAT(scheduler_->GetJob(job.job_id())->message(),
              HasSubstr("every agent of key 'cpu' is quarantined (noisy"));
}

TEST_F(SchedulerTest, AnUnaskedCalibrationIsRefused) {
  FakeWorker agent = RegisterCalibrating(*scheduler_, "a", 30, 0.01);
  proto::WorkerMessage answer;
  answer.mutable_calibration()->set_gflops(1);
  scheduler_->OnMessage(agent.id, answer);
  std::vector<proto::TrackerMessage> errors = agent.outbox->Take(proto::TrackerMessage::kError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].error().message(), HasSubstr("not asked for"));
  EXPECT_EQ(scheduler_->ListDevices().workers(0).calibration().gflops(), 30);
}

}  // namespace
}  // namespace tunefleet
