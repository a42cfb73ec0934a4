#include "job_driver/trial_executor.h"

#include <set>
#include <vector>

#include "common/clock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

proto::JobAssignment Assignment(int64_t n_trial, int32_t window) {
  proto::JobAssignment a;
  a.set_job_id("job-1");
  proto::JobSpec* spec = a.mutable_spec();
  spec->mutable_task()->set_workload_name("dense");
  spec->mutable_task()->set_workload_args_json(R"({"M":32,"N":32,"K":32,"layout":"NK"})");
  spec->mutable_task()->set_target("llvm");
  spec->set_tuner("random");
  spec->set_n_trial(n_trial);
  spec->set_seed(3);
  a.set_suggested_window(window);
  return a;
}

// Answers every proposal before returning, as local mode's fleet does: each
// config costs its index in microseconds.
class AnsweringFleet : public TrialExecutor {
 public:
  [[nodiscard]] absl::StatusOr<bool> Execute(JobRunner& runner,
                                             const proto::ProposeTrials& p) override {
    ++calls;
    proto::TrialsAccepted accepted;
    accepted.set_job_id(p.job_id());
    for (int i = 0; i < p.configs_size(); ++i) accepted.add_trial_ids(next_id++);
    runner.OnAccepted(accepted);
    for (const proto::ProposedConfig& c : p.configs()) {
      EXPECT_TRUE(measured.insert(c.config_index()).second) << "measured twice";
      proto::TrialUpdate u;
      u.set_job_id(p.job_id());
      u.set_task_index(c.task_index());
      u.set_config_json(c.config_json());
      u.set_config_index(c.config_index());
      u.mutable_result()->add_costs(1e-6 * static_cast<double>(c.config_index() + 1));
      runner.OnTrialUpdate(u);
    }
    if (p.finished()) finished = true;
    return true;
  }

  int calls = 0;
  int64_t next_id = 0;
  std::set<int64_t> measured;
  bool finished = false;
};

// Sends proposals and answers later, as the tracker's stream does.
class SendingFleet : public TrialExecutor {
 public:
  [[nodiscard]] absl::StatusOr<bool> Execute(JobRunner&, const proto::ProposeTrials& p) override {
    sent.push_back(p);
    return false;
  }
  std::vector<proto::ProposeTrials> sent;
};

class FailingFleet : public TrialExecutor {
 public:
  [[nodiscard]] absl::StatusOr<bool> Execute(JobRunner&, const proto::ProposeTrials&) override {
    return absl::DataLossError("the records file is gone");
  }
};

TEST(PumpTest, AFleetThatAnswersAtOnceRunsTheWholeJobInOnePump) {
  FakeClock clock;
  auto runner = JobRunner::Create(Assignment(20, 4), &clock).value();
  AnsweringFleet fleet;
  ASSERT_TRUE(Pump(*runner, fleet).ok());
  EXPECT_EQ(runner->done(), 20);
  EXPECT_EQ(fleet.measured.size(), 20u);
  EXPECT_FALSE(fleet.finished);  // n_trial reached: the tracker needs no `finished`
  EXPECT_GE(fleet.calls, 5);     // 20 trials through a window of 4
  // Nothing more once the job is done.
  const int calls = fleet.calls;
  ASSERT_TRUE(Pump(*runner, fleet).ok());
  EXPECT_EQ(fleet.calls, calls);
}

TEST(PumpTest, AFleetThatAnswersLaterGetsOneProposalPerPump) {
  FakeClock clock;
  auto runner = JobRunner::Create(Assignment(20, 4), &clock).value();
  SendingFleet fleet;
  ASSERT_TRUE(Pump(*runner, fleet).ok());
  ASSERT_EQ(fleet.sent.size(), 1u);
  EXPECT_EQ(fleet.sent[0].configs_size(), 4);  // the window
  ASSERT_TRUE(Pump(*runner, fleet).ok());      // no answer yet: the window is full
  EXPECT_EQ(fleet.sent.size(), 1u);
  // One answer frees one place.
  proto::TrialsAccepted accepted;
  accepted.set_job_id("job-1");
  for (int i = 0; i < 4; ++i) accepted.add_trial_ids(i);
  runner->OnAccepted(accepted);
  proto::TrialUpdate u;
  u.set_job_id("job-1");
  u.set_config_json(fleet.sent[0].configs(0).config_json());
  u.set_config_index(fleet.sent[0].configs(0).config_index());
  u.mutable_result()->add_costs(1e-3);
  runner->OnTrialUpdate(u);
  ASSERT_TRUE(Pump(*runner, fleet).ok());
  ASSERT_EQ(fleet.sent.size(), 2u);
  EXPECT_EQ(fleet.sent[1].configs_size(), 1);
}

TEST(PumpTest, AnExecutorsErrorStopsTheDriving) {
  FakeClock clock;
  auto runner = JobRunner::Create(Assignment(20, 4), &clock).value();
  FailingFleet fleet;
  absl::Status status = Pump(*runner, fleet);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(runner->done(), 0);
}

}  // namespace
}  // namespace tunefleet
