#include "job_driver/job_runner.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/pretuned/pretuned_records.h"
#include "tuner_core/selective/similarity.h"
#include "tuner_core/tuners/xgb_tuner.h"

namespace tunefleet {
namespace {

// The clock every runner here is timed by: it moves only when a test
// advances it.
FakeClock* TestClock() {
  static FakeClock clock;
  return &clock;
}

using ::testing::HasSubstr;

proto::JobAssignment Assignment(int64_t n_trial, int32_t window,
                                const std::string& tuner = "random") {
  proto::JobAssignment a;
  a.set_job_id("job-1");
  proto::JobSpec* spec = a.mutable_spec();
  spec->set_device_key("cpu");
  spec->mutable_task()->set_template_name("dense_pack.x86");  // GridConfigJson's space
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
  auto runner = JobRunner::Create(Assignment(10, 4), TestClock()).value();
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
  auto task = Task::Make("dense_pack.x86", "dense",
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
  auto runner = JobRunner::Create(a, TestClock()).value();
  EXPECT_EQ(runner->done(), 2);
  EXPECT_EQ(runner->in_flight(), 1);
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 3);  // 6 - 3 known
  for (const auto& c : p.configs()) EXPECT_GE(c.config_index(), 3);
}

TEST(JobRunnerTest, RejectedConfigsLeaveTheWindow) {
  auto runner = JobRunner::Create(Assignment(10, 2), TestClock()).value();
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
  auto runner = JobRunner::Create(a, TestClock()).value();
  proto::ProposeTrials p = runner->NextProposals();
  EXPECT_TRUE(p.finished());
  EXPECT_THAT(p.finish_reason(), HasSubstr("exhausted"));
  EXPECT_FALSE(runner->NextProposals().finished());  // said once

  proto::JobAssignment b = Assignment(100, 1);
  b.mutable_spec()->set_early_stopping(3);
  auto stopper = JobRunner::Create(b, TestClock()).value();
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
    auto runner = JobRunner::Create(Assignment(40, 4, name), TestClock()).value();
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

TEST(JobRunnerTest, TheProgressLineIsTimedByTheInjectedClock) {
  auto runner = JobRunner::Create(Assignment(10, 4), TestClock()).value();
  TestClock()->AdvanceSeconds(12.5);
  EXPECT_THAT(runner->Progress(), ::testing::HasSubstr("| 12.50 s"));
  EXPECT_FALSE(JobRunner::Create(Assignment(10, 4), nullptr).ok());
}

TEST(JobRunnerTest, BadJobsAreErrors) {
  proto::JobAssignment a = Assignment(10, 2);
  a.mutable_spec()->set_tuner("oracle");
  EXPECT_FALSE(JobRunner::Create(a, TestClock()).ok());
  a = Assignment(10, 2);
  a.mutable_spec()->mutable_task()->set_workload_args_json("{");
  EXPECT_THAT(JobRunner::Create(a, TestClock()).status().message(),
              HasSubstr("workload_args_json is not valid JSON"));
  // The same target grammar as the tracker and the builder.
  a = Assignment(10, 2);
  a.mutable_spec()->mutable_task()->set_target("llvm -O3");
  EXPECT_THAT(JobRunner::Create(a, TestClock()).status().message(),
              HasSubstr("unknown option \"-O3\""));
}

// spec.plan_size reaches the xgb tuners (which refuse one below 1).
TEST(JobRunnerTest, PlanSizeReachesTheModelTuner) {
  proto::JobAssignment a = Assignment(40, 4, "xgb");
  a.mutable_spec()->set_plan_size(4);
  EXPECT_TRUE(JobRunner::Create(a, TestClock()).ok());
  a.mutable_spec()->set_plan_size(0);
  EXPECT_THAT(JobRunner::Create(a, TestClock()).status().message(), HasSubstr("plan_size"));
}

// A model job: dense tasks with these M (N = K = 32) and weights.
proto::JobAssignment ModelAssignment(const std::vector<std::pair<int, double>>& tasks,
                                     int64_t n_trial, int32_t window, const std::string& policy) {
  proto::JobAssignment a = Assignment(n_trial, window);
  proto::JobSpec* spec = a.mutable_spec();
  spec->clear_task();
  for (const auto& [m, weight] : tasks) {
    proto::JobTask* t = spec->add_tasks();
    t->mutable_task()->set_template_name("dense_pack.x86");  // the spaces the tests count on
    t->mutable_task()->set_workload_name("dense");
    t->mutable_task()->set_workload_args_json(
        absl::StrCat(R"({"M":)", m, R"(,"N":32,"K":32,"layout":"NK"})"));
    t->mutable_task()->set_target("llvm");
    t->set_weight(weight);
  }
  spec->set_task_policy(policy);
  return a;
}

proto::TrialUpdate DoneOf(const proto::ProposedConfig& c, double cost, double timestamp = 0) {
  proto::TrialUpdate u = Done(c, cost);
  u.set_task_index(c.task_index());
  u.mutable_result()->set_timestamp(timestamp);
  return u;
}

// Adds a finished trial with `config` of a dense 32x32x32 task (ModelAssignment's
// M=32 tasks) to `a`, as the tracker lists it to a tuner taking the job over;
// its result time is its position.
void AddDoneTrial(proto::JobAssignment& a, int task_index, int64_t config, double cost) {
  static const std::unique_ptr<Task> task =
      Task::Make("dense_pack.x86", "dense",
                 nlohmann::json::parse(R"({"M":32,"N":32,"K":32,"layout":"NK"})"), "llvm")
          .value();
  proto::KnownTrial* t = a.add_trials();
  t->set_trial_id(a.trials_size() - 1);
  t->set_task_index(task_index);
  t->set_config_index(config);
  t->set_config_json(task->space().Get(config).value().ToJson().dump());
  t->set_done(true);
  t->mutable_result()->add_costs(cost);
  t->mutable_result()->set_timestamp(a.trials_size() - 1);
}

// Runs the job with every trial answered at once (cost by task); returns the
// task of each proposal in order.
std::vector<int> RunToEnd(JobRunner& runner, const std::vector<double>& cost_of_task,
                          bool* finished = nullptr) {
  std::vector<int> order;
  for (int step = 0; step < 10000; ++step) {
    proto::ProposeTrials p = runner.NextProposals();
    if (p.finished() && finished != nullptr) *finished = true;
    if (p.configs_size() == 0) break;
    proto::TrialsAccepted accepted;
    runner.OnAccepted(accepted);
    for (const proto::ProposedConfig& c : p.configs()) {
      order.push_back(c.task_index());
      runner.OnTrialUpdate(DoneOf(c, cost_of_task[c.task_index()] * (1 + c.config_index() % 5)));
    }
  }
  return order;
}

TEST(JobRunnerTest, SequentialPolicyTunesEachTaskInTurnUpToItsBudget) {
  proto::JobAssignment a = ModelAssignment({{16, 1}, {32, 1}, {64, 1}}, 12, 2, "sequential");
  auto runner = JobRunner::Create(a, TestClock()).value();
  EXPECT_EQ(runner->num_tasks(), 3);
  std::vector<int> order = RunToEnd(*runner, {1e-3, 1e-3, 1e-3});
  EXPECT_EQ(order, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_GT(runner->EstimatedLatency(), 0);
}

TEST(JobRunnerTest, GradientPolicyWarmsUpEveryTaskThenFavoursTheHeavyOne) {
  // Task 1 serves 20 layers: the model's latency is mostly its.
  proto::JobAssignment a = ModelAssignment({{16, 1}, {32, 20}, {64, 1}}, 60, 4, "gradient");
  auto runner = JobRunner::Create(a, TestClock()).value();
  std::vector<int> order = RunToEnd(*runner, {1e-4, 1e-3, 1e-4});
  ASSERT_EQ(order.size(), 60u);
  std::vector<int> count(3);
  for (int t : order) ++count[t];
  EXPECT_GT(count[0], 0);
  EXPECT_GT(count[2], 0);
  EXPECT_GT(count[1], count[0] + count[2]) << count[0] << " " << count[1] << " " << count[2];
}

TEST(JobRunnerTest, SelectiveDependentMeasuresItsRepresentativesTopK) {
  // Two tasks of the same shape: one cluster, one representative.
  proto::JobAssignment a = ModelAssignment({{32, 1}, {32, 1}}, 40, 4, "round_robin");
  a.mutable_spec()->set_trials_per_task(10);
  a.mutable_spec()->set_selective("top3");
  auto runner = JobRunner::Create(a, TestClock()).value();
  ASSERT_NE(runner->scheduled(0), runner->scheduled(1));
  const int rep = runner->scheduled(0) ? 0 : 1;
  const int dep = 1 - rep;
  std::map<int64_t, double> rep_costs;
  std::vector<int64_t> dep_configs;
  bool finished = false;
  for (int step = 0; step < 100; ++step) {
    proto::ProposeTrials p = runner->NextProposals();
    finished = finished || p.finished();
    if (p.configs_size() == 0) break;
    runner->OnAccepted(proto::TrialsAccepted());
    for (const proto::ProposedConfig& c : p.configs()) {
      const double cost = 1e-3 * (1 + (c.config_index() * 7919) % 13);
      if (c.task_index() == rep) {
        EXPECT_TRUE(dep_configs.empty()) << "the dependent waits for its representative";
        rep_costs[c.config_index()] = cost;
      } else {
        dep_configs.push_back(c.config_index());
      }
      runner->OnTrialUpdate(DoneOf(c, cost));
    }
  }
  EXPECT_TRUE(finished);
  EXPECT_EQ(rep_costs.size(), 10u);
  // The same space: the top 3 map to the same indices.
  std::vector<std::pair<double, int64_t>> ranked;
  for (const auto& [index, cost] : rep_costs) ranked.push_back({cost, index});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  ASSERT_EQ(dep_configs.size(), 3u) << "task " << dep;
  std::set<int64_t> top(dep_configs.begin(), dep_configs.end());
  std::set<double> top_costs;
  for (int64_t i : top) top_costs.insert(rep_costs.at(i));
  EXPECT_LE(*top_costs.rbegin(), ranked[2].first) << "the dependent took configs outside the top 3";
  EXPECT_EQ(runner->done(), 13);
}

// Runs `runner` to the end with a cost that depends on the config only; the
// configs each task measured, in order.
std::map<int, std::vector<int64_t>> RunSelectiveToEnd(JobRunner& runner, bool* finished) {
  std::map<int, std::vector<int64_t>> measured;
  for (int step = 0; step < 200; ++step) {
    proto::ProposeTrials p = runner.NextProposals();
    *finished = *finished || p.finished();
    if (p.configs_size() == 0) break;
    runner.OnAccepted(proto::TrialsAccepted());
    for (const proto::ProposedConfig& c : p.configs()) {
      measured[c.task_index()].push_back(c.config_index());
      runner.OnTrialUpdate(DoneOf(c, 1e-3 * (1 + (c.config_index() * 7919) % 13)));
    }
  }
  return measured;
}

TEST(JobRunnerTest, SelectiveDependentGoesOnTuningAfterItsTopKWithFollowupTrials) {
  proto::JobAssignment a = ModelAssignment({{32, 1}, {32, 1}}, 40, 4, "gradient");
  a.mutable_spec()->set_trials_per_task(10);
  a.mutable_spec()->set_selective("top3");
  a.mutable_spec()->set_selective_followup_trials(5);
  auto runner = JobRunner::Create(a, TestClock()).value();
  ASSERT_NE(runner->scheduled(0), runner->scheduled(1));
  const int rep = runner->scheduled(0) ? 0 : 1;
  bool finished = false;
  std::map<int, std::vector<int64_t>> measured = RunSelectiveToEnd(*runner, &finished);
  EXPECT_TRUE(finished);
  ASSERT_EQ(measured[rep].size(), 10u);
  // 3 from the representative's top, then 5 of its own search, none twice.
  ASSERT_EQ(measured[1 - rep].size(), 8u);
  std::set<int64_t> distinct(measured[1 - rep].begin(), measured[1 - rep].end());
  EXPECT_EQ(distinct.size(), 8u);
  const std::set<int64_t> rep_configs(measured[rep].begin(), measured[rep].end());
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(rep_configs.count(measured[1 - rep][i])) << "seed " << i << " is not a rep config";
  }
  EXPECT_EQ(runner->done(), 18);
}

TEST(JobRunnerTest, SelectiveFollowupResumesAfterATakeoverWithinItsBudget) {
  proto::JobAssignment a = ModelAssignment({{32, 1}, {32, 1}}, 40, 8, "round_robin");
  a.mutable_spec()->set_trials_per_task(4);
  a.mutable_spec()->set_selective("top2");
  a.mutable_spec()->set_selective_followup_trials(3);
  auto probe = JobRunner::Create(a, TestClock()).value();
  const int rep = probe->scheduled(0) ? 0 : 1;
  // Before the takeover: the representative did its 4; the dependent its 2
  // seeds (configs 0 and 1, the best two) and 1 follow-up trial (config 9).
  for (int i = 0; i < 4; ++i) AddDoneTrial(a, rep, i, 1e-3 * (i + 1));
  AddDoneTrial(a, 1 - rep, 0, 1e-3);
  AddDoneTrial(a, 1 - rep, 1, 2e-3);
  AddDoneTrial(a, 1 - rep, 9, 3e-3);
  auto runner = JobRunner::Create(a, TestClock()).value();
  bool finished = false;
  std::map<int, std::vector<int64_t>> measured = RunSelectiveToEnd(*runner, &finished);
  EXPECT_TRUE(finished);
  EXPECT_TRUE(measured[rep].empty());
  ASSERT_EQ(measured[1 - rep].size(), 2u) << "2 + 3 trials in all, 3 of them before";
  for (int64_t c : measured[1 - rep]) {
    EXPECT_NE(c, 0);
    EXPECT_NE(c, 1);
    EXPECT_NE(c, 9);
  }
}

TEST(JobRunnerTest, ATaskFirstTriesTheBestScheduleOfTheFastestTaskOfItsTemplate) {
  // Sequential, one trial at a time: task 0 (M=32) is tuned first, then task
  // 1 (M=64, same template) starts from task 0's best schedule.
  for (const bool share : {true, false}) {
    proto::JobAssignment a = ModelAssignment({{32, 1}, {64, 1}}, 12, 1, "sequential");
    a.mutable_spec()->set_trials_per_task(6);
    a.mutable_spec()->set_share_schedules(share);
    auto runner = JobRunner::Create(a, TestClock()).value();
    std::map<int, std::vector<proto::ProposedConfig>> proposed;
    std::map<int64_t, double> cost0;
    for (int step = 0; step < 100; ++step) {
      proto::ProposeTrials p = runner->NextProposals();
      if (p.configs_size() == 0) break;
      runner->OnAccepted(proto::TrialsAccepted());
      for (const proto::ProposedConfig& c : p.configs()) {
        proposed[c.task_index()].push_back(c);
        const double cost = 1e-3 * (1 + (c.config_index() * 7919) % 13);
        if (c.task_index() == 0) cost0[c.config_index()] = cost;
        runner->OnTrialUpdate(DoneOf(c, cost));
      }
    }
    ASSERT_EQ(proposed[0].size(), 6u);
    ASSERT_EQ(proposed[1].size(), 6u);
    int64_t best0 = -1;
    for (const auto& [index, cost] : cost0) {
      if (best0 < 0 || cost < cost0[best0]) best0 = index;
    }
    const Task& t0 = runner->task(0);
    const Task& t1 = runner->task(1);
    const Config expected = MapConfigNearest(t0.space().Get(best0).value(), t1.space());
    if (share) {
      EXPECT_EQ(proposed[1][0].config_index(), expected.index());
    }
    std::set<int64_t> distinct;
    for (const auto& c : proposed[1]) distinct.insert(c.config_index());
    EXPECT_EQ(distinct.size(), 6u) << "share=" << share;
  }
}

TEST(JobRunnerTest, ModelJobResumesWithItsSchedulerState) {
  proto::JobAssignment a = ModelAssignment({{16, 1}, {32, 1}}, 8, 8, "sequential");
  // Task 0 (budget 4) has 3 results and one trial in flight; task 1 none.
  for (int i = 0; i < 4; ++i) {
    proto::KnownTrial* t = a.add_trials();
    t->set_trial_id(i);
    t->set_task_index(0);
    auto task = Task::Make("dense_pack.x86", "dense",
                           nlohmann::json::parse(R"({"M":16,"N":32,"K":32,"layout":"NK"})"), "llvm")
                    .value();
    t->set_config_index(i);
    t->set_config_json(task->space().Get(i).value().ToJson().dump());
    t->set_done(i < 3);
    if (i < 3) {
      t->mutable_result()->add_costs(1e-3 * (3 - i));
      t->mutable_result()->set_timestamp(100 + i);
    }
  }
  auto runner = JobRunner::Create(a, TestClock()).value();
  EXPECT_EQ(runner->done(), 3);
  EXPECT_EQ(runner->in_flight(), 1);
  proto::ProposeTrials p = runner->NextProposals();
  // Task 0's budget is spent (3 done + 1 in flight): task 1 runs next.
  ASSERT_EQ(p.configs_size(), 4);
  for (const auto& c : p.configs()) EXPECT_EQ(c.task_index(), 1);
  EXPECT_DOUBLE_EQ(runner->EstimatedLatency(), 1e-3);
}

TEST(JobRunnerTest, RefusedConfigsOfAModelJobGoBackToTheirTask) {
  proto::JobAssignment a = ModelAssignment({{16, 1}, {32, 1}}, 4, 4, "round_robin");
  auto runner = JobRunner::Create(a, TestClock()).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 4);
  proto::TrialsAccepted accepted;
  accepted.add_rejected("store write failed");
  accepted.add_rejected_positions(1);
  runner->OnAccepted(accepted);
  EXPECT_EQ(runner->in_flight(), 3);
  proto::ProposeTrials again = runner->NextProposals();
  ASSERT_EQ(again.configs_size(), 1);
  EXPECT_EQ(again.configs(0).task_index(), p.configs(1).task_index());
}

TEST(JobRunnerTest, TakeoverAfterATaskUsedUpItsSpaceGoesOnWithTheNext) {
  proto::JobAssignment a = ModelAssignment({{16, 1}, {32, 1}}, 100000, 4, "sequential");
  auto first = Task::Make("dense_pack.x86", "dense",
                          nlohmann::json::parse(R"({"M":16,"N":32,"K":32,"layout":"NK"})"), "llvm")
                   .value();
  const int64_t size = first->space().size();
  ASSERT_LT(size, 200000) << "the test replays every config of task 0";
  a.mutable_spec()->set_trials_per_task(size + 10);  // more than task 0 can use
  a.mutable_spec()->set_n_trial(2 * (size + 10));    // and the job has room for both tasks
  for (int64_t i = 0; i < size; ++i) {
    proto::KnownTrial* t = a.add_trials();
    t->set_trial_id(i);
    t->set_task_index(0);
    t->set_config_index(i);
    t->set_config_json(first->space().Get(i).value().ToJson().dump());
    t->set_done(true);
    t->mutable_result()->add_costs(1e-3);
  }
  auto runner = JobRunner::Create(a, TestClock()).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 4) << "an empty proposal with nothing in flight would stall the job";
  for (const auto& c : p.configs()) EXPECT_EQ(c.task_index(), 1);
}

TEST(JobRunnerTest, SelectiveTakeoverSeedsWhatADependentStillLacks) {
  proto::JobAssignment a = ModelAssignment({{32, 1}, {32, 1}}, 40, 8, "round_robin");
  a.mutable_spec()->set_trials_per_task(4);
  a.mutable_spec()->set_selective("top3");
  auto probe = JobRunner::Create(a, TestClock()).value();
  const int rep = probe->scheduled(0) ? 0 : 1;
  // The representative did its 4; the dependent got 1 of its 3 before the takeover.
  for (int i = 0; i < 4; ++i) AddDoneTrial(a, rep, i, 1e-3 * (i + 1));
  AddDoneTrial(a, 1 - rep, 0, 1e-3);
  auto runner = JobRunner::Create(a, TestClock()).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 2);
  for (const auto& c : p.configs()) {
    EXPECT_EQ(c.task_index(), 1 - rep);
    EXPECT_NE(c.config_index(), 0) << "already measured before the takeover";
  }
}

TEST(JobRunnerTest, StopsProposingOnceTheTimeBudgetIsSpent) {
  FakeClock clock;
  proto::JobAssignment a = Assignment(1000, 4);
  a.mutable_spec()->set_time_budget_s(10);
  auto runner = JobRunner::Create(a, &clock).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 4);
  clock.AdvanceSeconds(4);
  runner->OnTrialUpdate(Done(p.configs(0), 1e-3));
  proto::ProposeTrials more = runner->NextProposals();  // 4 s in: the window refills
  EXPECT_EQ(more.configs_size(), 1);
  EXPECT_FALSE(more.finished());
  clock.AdvanceSeconds(7);  // 11 s: over budget, trials still in flight
  runner->OnTrialUpdate(Done(p.configs(1), 1e-3));
  proto::ProposeTrials last = runner->NextProposals();
  EXPECT_EQ(last.configs_size(), 0);
  EXPECT_TRUE(last.finished());
  EXPECT_THAT(last.finish_reason(), HasSubstr("time budget (10 s) is spent after 2 trials"));
}

TEST(JobRunnerTest, ATakeoverGoesOnWithTheTimeThatIsLeft) {
  FakeClock clock;
  const double now = static_cast<double>(clock.WallNanos()) * 1e-9;
  proto::JobAssignment a = Assignment(1000, 2);
  a.mutable_spec()->set_time_budget_s(10);
  // One trial done by the previous tuner: it began 8 s ago (1 s of build and
  // measurement, finished 7 s ago).
  proto::KnownTrial* t = a.add_trials();
  t->set_trial_id(0);
  t->set_task_index(0);
  t->set_config_json(GridConfigJson(3));
  t->set_config_index(3);
  t->set_done(true);
  t->mutable_result()->add_costs(1e-3);
  t->mutable_result()->set_all_cost(1);
  t->mutable_result()->set_timestamp(now - 7);
  auto runner = JobRunner::Create(a, &clock).value();
  EXPECT_EQ(runner->NextProposals().configs_size(), 2);  // 2 s are left
  clock.AdvanceSeconds(2.5);
  EXPECT_TRUE(runner->NextProposals().finished());

  a.mutable_spec()->set_time_budget_s(-1);
  auto bad = JobRunner::Create(a, &clock);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("time_budget_s must be > 0 seconds, got -1"));
}

TEST(JobRunnerTest, EachTaskMeasuresItsFirstConfigFirstAndOnce) {
  proto::JobAssignment a = ModelAssignment({{16, 1}, {32, 1}}, 8, 2, "round_robin");
  auto first_for = [](const Task& task) -> std::vector<Config> {
    return {task.space().Get(task.space().size() - 1).value()};  // the last config
  };
  auto runner = JobRunner::Create(a, TestClock(), {.first_for = first_for}).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 2);
  std::set<int> firsts;
  for (const auto& c : p.configs()) {
    EXPECT_EQ(c.config_index(), runner->task(c.task_index()).space().size() - 1);
    firsts.insert(c.task_index());
  }
  EXPECT_EQ(firsts, (std::set<int>{0, 1}));
  std::set<std::pair<int, int64_t>> seen;
  for (const auto& c : p.configs()) seen.insert({c.task_index(), c.config_index()});
  std::vector<proto::ProposedConfig> flying(p.configs().begin(), p.configs().end());
  while (!flying.empty()) {
    proto::ProposedConfig c = flying.back();
    flying.pop_back();
    runner->OnTrialUpdate(DoneOf(c, 1e-3));
    const proto::ProposeTrials more = runner->NextProposals();
    for (const auto& m : more.configs()) {
      EXPECT_TRUE(seen.insert({m.task_index(), m.config_index()}).second)
          << "task " << m.task_index() << " config " << m.config_index() << " twice";
      flying.push_back(m);
    }
  }
  EXPECT_EQ(seen.size(), 8u);
}

TEST(JobRunnerTest, ASelectiveDependentMeasuresItsFirstConfigsAtTheStart) {
  // Two tasks of the same shape: one cluster; the dependent's shipped
  // configs (a warm start) are measured before its representative is done,
  // and count towards its top-k.
  proto::JobAssignment a = ModelAssignment({{32, 1}, {32, 1}}, 40, 4, "round_robin");
  a.mutable_spec()->set_trials_per_task(10);
  a.mutable_spec()->set_selective("top3");
  auto first_for = [](const Task& task) -> std::vector<Config> {
    return {task.space().Get(1).value(), task.space().Get(2).value()};
  };
  auto runner = JobRunner::Create(a, TestClock(), {.first_for = first_for}).value();
  const int dep = runner->scheduled(0) ? 1 : 0;
  proto::ProposeTrials first = runner->NextProposals();
  std::vector<int64_t> dep_first;
  for (const proto::ProposedConfig& c : first.configs()) {
    if (c.task_index() == dep) dep_first.push_back(c.config_index());
  }
  EXPECT_EQ(dep_first, (std::vector<int64_t>{1, 2}));
  runner->OnAccepted(proto::TrialsAccepted());
  for (const proto::ProposedConfig& c : first.configs()) {
    runner->OnTrialUpdate(DoneOf(c, 1e-3 * (1 + (c.config_index() * 7919) % 13)));
  }
  bool finished = false;
  std::map<int, std::vector<int64_t>> rest = RunSelectiveToEnd(*runner, &finished);
  EXPECT_TRUE(finished);
  // Its top 3: the two first configs and one of the representative's.
  EXPECT_EQ(rest[dep].size(), 1u);
  for (int64_t index : rest[dep]) EXPECT_NE(index, 1);
}

TEST(JobRunnerTest, AFleetJobOfAShippedFamilyMeasuresTheShippedConfigsFirst) {
  proto::JobAssignment a = ModelAssignment({{16, 1}}, 8, 8, "round_robin");
  a.mutable_spec()->mutable_tasks(0)->mutable_task()->set_template_name("dense_gemm.x86");
  a.mutable_spec()->set_pretuned_family("x86_64-avx512");
  const JobRunner::FirstConfigFor first_for = JobRunner::ShippedFirstConfigs(a.spec()).value();
  ASSERT_TRUE(first_for);
  auto runner = JobRunner::Create(a, TestClock(), {.first_for = first_for}).value();
  const std::vector<Config> shipped = first_for(runner->task(0));
  ASSERT_FALSE(shipped.empty());
  EXPECT_LE(shipped.size(), static_cast<size_t>(kPretunedConfigsPerTask));
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_GE(p.configs_size(), static_cast<int>(shipped.size()));
  for (size_t i = 0; i < shipped.size(); ++i) {
    EXPECT_EQ(p.configs(static_cast<int>(i)).config_index(), shipped[i].index());
  }
  // No family, or one the project ships nothing for: a cold start.
  a.mutable_spec()->set_pretuned_family("");
  EXPECT_FALSE(JobRunner::ShippedFirstConfigs(a.spec()).value());
  a.mutable_spec()->set_pretuned_family("riscv64-rvv");
  EXPECT_FALSE(JobRunner::ShippedFirstConfigs(a.spec()).value());
}

TEST(JobRunnerTest, AFleetJobOfAFamilyWithAShippedPriorStartsItsXgbModelsFromIt) {
  proto::JobAssignment a = ModelAssignment({{16, 1}}, 8, 8, "round_robin");
  a.mutable_spec()->mutable_tasks(0)->mutable_task()->set_template_name("dense_gemm.x86");
  a.mutable_spec()->set_tuner("xgb");
  a.mutable_spec()->set_pretuned_family("x86_64-avx2");
  const PriorLookup prior_for = JobRunner::ShippedPriors(a.spec()).value();
  ASSERT_TRUE(prior_for);
  EXPECT_NE(prior_for("dense_gemm.x86", FeatureKind::kItervar), nullptr);
  EXPECT_EQ(prior_for("no_such_template.x86", FeatureKind::kItervar), nullptr);
  auto runner = JobRunner::Create(a, TestClock(), {.prior_for = prior_for}).value();
  EXPECT_GT(runner->NextProposals().configs_size(), 0);
  // A tuner that takes no prior: none loaded.
  a.mutable_spec()->set_tuner("random");
  EXPECT_FALSE(JobRunner::ShippedPriors(a.spec()).value());
  a.mutable_spec()->set_tuner("xgb");
  // No family, or one the project ships no prior for: none.
  a.mutable_spec()->set_pretuned_family("");
  EXPECT_FALSE(JobRunner::ShippedPriors(a.spec()).value());
  a.mutable_spec()->set_pretuned_family("riscv64-rvv");
  EXPECT_FALSE(JobRunner::ShippedPriors(a.spec()).value());
}

// Transfer between tasks: each task's xgb tuner learns from the records of
// the (at most 3) tasks of its template most like it, as they come.
TEST(JobRunnerTest, EachTaskLearnsFromTheRecordsOfTheTasksMostLikeIt) {
  proto::JobAssignment a =
      ModelAssignment({{16, 1}, {24, 1}, {32, 1}, {48, 1}, {64, 1}}, 200, 4, "sequential");
  a.mutable_spec()->set_tuner("xgb");
  a.mutable_spec()->set_trials_per_task(40);
  a.mutable_spec()->set_transfer_between_tasks(true);
  auto runner = JobRunner::Create(a, TestClock()).value();
  RunToEnd(*runner, {1e-3, 1e-3, 1e-3, 1e-3, 1e-3});
  // The last task learnt from 3 others, each offered at its 32nd result.
  const auto* last = dynamic_cast<const XgbTuner*>(&runner->tuner(4));
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->history_workloads(), JobRunner::kTransferSources);
  EXPECT_EQ(last->history_records(), 3 * JobRunner::kTransferEvery);
  // The first task was done before any other had 32 results.
  EXPECT_EQ(dynamic_cast<const XgbTuner&>(runner->tuner(0)).history_workloads(), 0);

  a.mutable_spec()->clear_transfer_between_tasks();  // off by default
  runner = JobRunner::Create(a, TestClock()).value();
  RunToEnd(*runner, {1e-3, 1e-3, 1e-3, 1e-3, 1e-3});
  EXPECT_EQ(dynamic_cast<const XgbTuner&>(runner->tuner(4)).history_workloads(), 0);
}

// A task spec carrying the vectors its submitter resolved (an AVX2 host's
// 16 ymm registers): the fleet's tuner skips the 16-lane vectors and the
// tiles 16 registers cannot hold before proposing them, as local mode does.
TEST(JobRunnerTest, ATasksResolvedVectorsKeepItsSearchToWhatTheTargetBuilds) {
  proto::JobAssignment a = Assignment(64, 64);
  proto::TaskSpec* task = a.mutable_spec()->mutable_task();
  task->set_template_name("dense_gemm.x86");
  task->set_target("llvm -mcpu=znver1");
  proto::TargetVectors* v = task->mutable_vectors();
  v->set_triple("x86_64-unknown-linux-gnu");
  v->set_vector_bits(256);
  v->set_max_vector_bits(256);
  v->set_vector_registers(16);
  auto runner = JobRunner::Create(a, TestClock()).value();
  proto::ProposeTrials p = runner->NextProposals();
  ASSERT_EQ(p.configs_size(), 64);
  for (const proto::ProposedConfig& c : p.configs()) {
    EXPECT_EQ(c.config_json().find("[\"vec\",\"ot\",16]"), std::string::npos) << c.config_json();
  }
  EXPECT_GT(runner->tuner(0).refused_before_measuring(), 0);

  // Without them the same search proposes 16-lane vectors too.
  a.mutable_spec()->mutable_task()->clear_vectors();
  auto unchecked = JobRunner::Create(a, TestClock()).value();
  proto::ProposeTrials q = unchecked->NextProposals();
  int wide = 0;
  for (const proto::ProposedConfig& c : q.configs()) {
    wide += c.config_json().find("[\"vec\",\"ot\",16]") != std::string::npos;
  }
  EXPECT_GT(wide, 0);

  // Values no target has are refused, naming them.
  proto::JobAssignment bad = Assignment(4, 4);
  bad.mutable_spec()->mutable_task()->mutable_vectors()->set_triple("pdp11");
  EXPECT_THAT(JobRunner::Create(bad, TestClock()).status().message(),
              HasSubstr("unknown triple \"pdp11\""));
  bad.mutable_spec()->mutable_task()->mutable_vectors()->set_triple("x86_64-unknown-linux-gnu");
  bad.mutable_spec()->mutable_task()->mutable_vectors()->set_vector_registers(-3);
  EXPECT_THAT(JobRunner::Create(bad, TestClock()).status().message(),
              HasSubstr("vector_registers -3"));
  bad.mutable_spec()->mutable_task()->mutable_vectors()->set_vector_registers(16);
  bad.mutable_spec()->mutable_task()->mutable_vectors()->set_vector_bits(0);
  EXPECT_THAT(JobRunner::Create(bad, TestClock()).status().message(), HasSubstr("vector_bits 0"));
}

}  // namespace
}  // namespace tunefleet
