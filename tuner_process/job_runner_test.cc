#include "tuner_process/job_runner.h"

#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

proto::JobAssignment Assignment(int64_t n_trial, int32_t window,
                                const std::string& tuner = "random") {
  proto::JobAssignment a;
  a.set_job_id("job-1");
  proto::JobSpec* spec = a.mutable_spec();
  spec->set_device_key("cpu");
  spec->mutable_task()->set_workload_name("dense");
  spec->mutable_task()->set_workload_args_json(R"({"M":32,"N":32,"K":32,"layout":"NK"})");
  spec->mutable_task()->set_target("llvm");
  spec->set_tuner(tuner);
  spec->set_n_trial(n_trial);
  spec->set_early_stopping(-1);
  spec->set_seed(7);
  a.set_suggested_window(window);
  return a;
}

proto::TrialUpdate Done(const proto::ProposedConfig& c, double cost) {
  proto::TrialUpdate u;
  u.set_job_id("job-1");
  u.set_config_json(c.config_json());
  u.set_config_index(c.config_index());
  u.mutable_result()->add_costs(cost);
  return u;
}

TEST(JobRunnerTest, KeepsTheWindowFullAndStopsAtNTrial) {
  auto runner = JobRunner::Create(Assignment(10, 4)).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 4);
  EXPECT_TRUE(runner->NextProposals().configs().empty());  // window full
  std::set<int64_t> seen;
  std::vector<proto::ProposedConfig> flying(p.configs().begin(), p.configs().end());
  for (const auto& c : flying) seen.insert(c.config_index());
  int64_t proposed = 4;
  while (!flying.empty()) {
    proto::ProposedConfig c = flying.back();
    flying.pop_back();
    runner->OnTrialUpdate(Done(c, 1e-3));
    proto::ProposeTrials more = runner->NextProposals();
    for (const auto& m : more.configs()) {
      EXPECT_TRUE(seen.insert(m.config_index()).second) << "proposed twice: " << m.config_index();
      flying.push_back(m);
      ++proposed;
    }
    EXPECT_LE(runner->in_flight(), 4);
  }
  EXPECT_EQ(proposed, 10);
  EXPECT_EQ(runner->done(), 10);
  EXPECT_GT(runner->best_gflops(), 0);
}

std::string GridConfigJson(int64_t index) {
  auto task = Task::Make("", "dense",
                         nlohmann::json::parse(R"({"M":32,"N":32,"K":32,"layout":"NK"})"), "llvm")
                  .value();
  return task->space().Get(index).value().ToJson().dump();
}

TEST(JobRunnerTest, ResumesFromKnownTrialsWithoutReproposingThem) {
  proto::JobAssignment a = Assignment(6, 8, "grid");
  // Grid proposes indices 0.. in order; say 0..2 are known (2 done, 1 in flight).
  for (int i = 0; i < 3; ++i) {
    proto::KnownTrial* t = a.add_trials();
    t->set_trial_id(i);
    t->set_config_index(i);
    t->set_config_json(GridConfigJson(i));
    t->set_done(i < 2);
    if (i < 2) t->mutable_result()->add_costs(1e-3);
  }
  auto runner = JobRunner::Create(a).value();
  EXPECT_EQ(runner->done(), 2);
  EXPECT_EQ(runner->in_flight(), 1);
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 3);  // 6 - 3 known
  for (const auto& c : p.configs()) EXPECT_GE(c.config_index(), 3);
}

TEST(JobRunnerTest, RejectedConfigsLeaveTheWindow) {
  auto runner = JobRunner::Create(Assignment(10, 2)).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 2);
  proto::TrialsAccepted accepted;
  accepted.set_job_id("job-1");
  accepted.add_trial_ids(0);
  accepted.add_rejected("config outside the space");
  runner->OnAccepted(accepted);
  EXPECT_EQ(runner->in_flight(), 1);
  EXPECT_EQ(runner->NextProposals().configs_size(), 1);
}

TEST(JobRunnerTest, SpaceExhaustionAndEarlyStoppingEndTheSearch) {
  proto::JobAssignment a = Assignment(1000000, 1000000, "grid");
  auto runner = JobRunner::Create(a).value();
  proto::ProposeTrials p = runner->NextProposals();
  EXPECT_TRUE(p.finished());
  EXPECT_THAT(p.finish_reason(), HasSubstr("exhausted"));
  EXPECT_FALSE(runner->NextProposals().finished());  // said once

  proto::JobAssignment b = Assignment(100, 1);
  b.mutable_spec()->set_early_stopping(3);
  auto stopper = JobRunner::Create(b).value();
  double cost = 1e-3;
  for (int i = 0; i < 10; ++i) {
    proto::ProposeTrials q = stopper->NextProposals();
    if (q.finished()) {
      EXPECT_THAT(q.finish_reason(), HasSubstr("early stopping"));
      EXPECT_EQ(stopper->done(), 3);  // AutoTVM: stop once done >= best_trial + early_stopping
      return;
    }
    ASSERT_EQ(q.configs_size(), 1);
    stopper->OnTrialUpdate(Done(q.configs(0), cost));
    cost *= 2;  // never better than the first
  }
  FAIL() << "early stopping never triggered";
}

TEST(JobRunnerTest, ModelBasedTunersRunAsynchronously) {
  for (const char* name : {"xgb", "ga"}) {
    auto runner = JobRunner::Create(Assignment(40, 4, name)).value();
    std::set<int64_t> seen;
    std::vector<proto::ProposedConfig> flying;
    double cost = 1e-3;
    for (int step = 0; step < 200 && runner->done() < 40; ++step) {
      const proto::ProposeTrials proposals = runner->NextProposals();
      for (const auto& c : proposals.configs()) {
        EXPECT_TRUE(seen.insert(c.config_index()).second) << name << " proposed twice";
        flying.push_back(c);
      }
      if (flying.empty()) break;
      // Results arrive one at a time, out of order.
      proto::ProposedConfig c = flying.front();
      flying.erase(flying.begin());
      runner->OnTrialUpdate(Done(c, cost * (1 + (c.config_index() % 7))));
    }
    EXPECT_EQ(runner->done(), 40) << name;
  }
}

TEST(JobRunnerTest, BadJobsAreErrors) {
  proto::JobAssignment a = Assignment(10, 2);
  a.mutable_spec()->set_tuner("oracle");
  EXPECT_FALSE(JobRunner::Create(a).ok());
  a = Assignment(10, 2);
  a.mutable_spec()->mutable_task()->set_workload_args_json("{");
  EXPECT_THAT(JobRunner::Create(a).status().message(),
              HasSubstr("workload_args_json is not valid JSON"));
  // The same target grammar as the tracker and the builder.
  a = Assignment(10, 2);
  a.mutable_spec()->mutable_task()->set_target("llvm -O3");
  EXPECT_THAT(JobRunner::Create(a).status().message(), HasSubstr("unknown option \"-O3\""));
}

}  // namespace
}  // namespace tunefleet
