#include "tuner_core/task_scheduler/task_scheduler.h"

#include <algorithm>
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

// A task whose best latency after n trials is floor + span / (1 + n / speed):
// large `span` = much to gain.
struct FakeTask {
  double floor, span, speed;
  double Cost(int64_t n) const { return floor + span / (1.0 + n / speed); }
};

// Runs `total` trials; returns the estimated latency after them.
double RunTrials(TaskScheduler& scheduler, const std::vector<FakeTask>& tasks, int total) {
  for (int i = 0; i < total; ++i) {
    std::optional<int> t = scheduler.NextTask();
    if (!t) break;
    EXPECT_TRUE(scheduler.OnResult(*t, tasks[*t].Cost(scheduler.trials(*t) + 1)).ok());
  }
  return scheduler.EstimatedLatency();
}

TEST(TaskSchedulerTest, RoundRobinTakesTurns) {
  TaskScheduler scheduler({{1, 0}, {1, 0}, {1, 0}}, {.policy = TaskSchedulePolicy::kRoundRobin});
  std::vector<int> order;
  for (int i = 0; i < 6; ++i) {
    order.push_back(*scheduler.NextTask());
    ASSERT_TRUE(scheduler.OnResult(order.back(), 1.0).ok());
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(TaskSchedulerTest, SequentialFinishesEachTaskBeforeTheNext) {
  TaskScheduler scheduler({{1, 0}, {1, 0}},
                          {.policy = TaskSchedulePolicy::kSequential, .max_trials_per_task = 3});
  std::vector<int> order;
  while (std::optional<int> t = scheduler.NextTask()) {
    order.push_back(*t);
    ASSERT_TRUE(scheduler.OnResult(*t, 1.0).ok());
  }
  EXPECT_EQ(order, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_TRUE(scheduler.AllDone());
}

TEST(TaskSchedulerTest, ExhaustedWithdrawnAndAssignedTrialsAreCounted) {
  TaskScheduler scheduler({{1, 0}, {1, 0}},
                          {.policy = TaskSchedulePolicy::kSequential, .max_trials_per_task = 5});
  ASSERT_EQ(scheduler.NextTask(), 0);
  scheduler.Withdraw(0);  // refused: no result will come
  scheduler.Exhaust(0);   // and task 0 has nothing more to propose
  EXPECT_TRUE(scheduler.done(0));
  EXPECT_EQ(scheduler.NextTask(), 1);
  scheduler.Assign(1);  // a replayed trial in flight
  ASSERT_TRUE(scheduler.OnResult(1, 2.0).ok());
  ASSERT_TRUE(scheduler.OnResult(1, 1.0).ok());
  EXPECT_EQ(scheduler.trials(1), 2);
  EXPECT_DOUBLE_EQ(scheduler.best_cost(1), 1.0);
  EXPECT_FALSE(scheduler.OnResult(1, 1.0).ok()) << "nothing of task 1 is in flight any more";
}

TEST(TaskSchedulerTest, HeldTaskIsCountedButNotPickedUntilReleasedAndKeepsItsOwnBudget) {
  // Task 1 waits (a selective dependent): 2 trials assigned from outside
  // (its representative's top-k) before release with a budget of 4.
  TaskScheduler scheduler({{1, 0}, {.weight = 1, .held = true}},
                          {.policy = TaskSchedulePolicy::kRoundRobin, .max_trials_per_task = 3});
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) {
    order.push_back(*scheduler.NextTask());
    ASSERT_TRUE(scheduler.OnResult(order.back(), 1.0).ok());
  }
  EXPECT_EQ(order, (std::vector<int>{0, 0, 0}));
  EXPECT_FALSE(scheduler.NextTask().has_value()) << "task 1 is held";
  EXPECT_FALSE(scheduler.AllDone());
  scheduler.Assign(1);
  scheduler.Assign(1);
  ASSERT_TRUE(scheduler.OnResult(1, 2.0).ok());
  ASSERT_TRUE(scheduler.OnResult(1, 1.5).ok());
  scheduler.Release(1, 4);
  order.clear();
  while (std::optional<int> t = scheduler.NextTask()) {
    order.push_back(*t);
    ASSERT_TRUE(scheduler.OnResult(*t, 1.0).ok());
  }
  EXPECT_EQ(order, (std::vector<int>{1, 1})) << "4 trials in all, 2 of them assigned";
  EXPECT_TRUE(scheduler.AllDone());
  // Held survives a restart.
  TaskScheduler held({{.held = true}}, {});
  TaskScheduler restored({{.held = true}}, {});
  held.Release(0, 1);
  ASSERT_TRUE(restored.RestoreJson(held.ToJson()).ok());
  EXPECT_EQ(restored.NextTask(), 0);
  EXPECT_FALSE(restored.NextTask().has_value()) << "its budget of 1 came back too";
}

TEST(TaskSchedulerTest, ATaskFarBelowItsGroupsThroughputIsPreferred) {
  // Same weight, FLOPs, best cost and flat progress for tasks 1 and 2; task
  // 2's group-mate (task 0) runs 10x faster, so task 2 can expect to gain
  // far more than task 1, which has no group (Ansor's similar-task term).
  const double flops = 1e9;
  TaskScheduler scheduler({{.weight = 1, .flops = flops, .group = 0},
                           {.weight = 1, .flops = flops},
                           {.weight = 1, .flops = flops, .group = 0}},
                          {.warmup_trials = 1, .per_second = false, .early_stopping = -1});
  const double best[] = {1e-3, 10e-3, 10e-3};
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 20; ++i) {
      scheduler.Assign(t);
      ASSERT_TRUE(scheduler.OnResult(t, best[t]).ok());
    }
  }
  EXPECT_EQ(scheduler.NextTask(), 2);
  // Without the group, the two are tied and the first wins.
  TaskScheduler ungrouped(
      {{.weight = 1, .flops = flops}, {.weight = 1, .flops = flops}, {.weight = 1, .flops = flops}},
      {.warmup_trials = 1, .per_second = false, .early_stopping = -1});
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 20; ++i) {
      ungrouped.Assign(t);
      ASSERT_TRUE(ungrouped.OnResult(t, best[t]).ok());
    }
  }
  EXPECT_EQ(ungrouped.NextTask(), 1);
}

TEST(TaskSchedulerTest, PerSecondRankingPrefersTheTaskWhoseTrialsAreCheaper) {
  // Equal weights, equal progress; task 1's trials take 10x longer.
  for (bool per_second : {false, true}) {
    TaskScheduler scheduler({{1, 0}, {1, 0}}, {.warmup_trials = 0, .per_second = per_second});
    for (int i = 0; i < 4; ++i) {
      for (int t : {0, 1}) {
        scheduler.Assign(t);
        ASSERT_TRUE(scheduler.OnResult(t, 1.0 / (i + 1), t == 0 ? 0.1 : 1.0).ok());
      }
    }
    std::vector<int> picks;
    for (int i = 0; i < 4; ++i) {
      const int t = *scheduler.NextTask();
      picks.push_back(t);
      ASSERT_TRUE(scheduler.OnResult(t, 0.25, t == 0 ? 0.1 : 1.0).ok());
    }
    if (per_second) {
      EXPECT_EQ(picks, (std::vector<int>{0, 0, 0, 0}));
    } else {
      EXPECT_NE(std::count(picks.begin(), picks.end(), 1), 0) << "per trial: both are equal";
    }
  }
}

TEST(TaskSchedulerTest, WarmupGivesEveryTaskItsTrialsFirst) {
  TaskScheduler scheduler({{5, 0}, {1, 0}}, {.warmup_trials = 3});
  std::vector<int> counts(2, 0);
  for (int i = 0; i < 6; ++i) ++counts[*scheduler.NextTask()];
  EXPECT_EQ(counts, (std::vector<int>{3, 3}));
}

TEST(TaskSchedulerTest, GradientSpendsTrialsWhereTheModelGainsMost) {
  // Task 0 serves 8 layers and still improves; task 1 is flat from the start.
  std::vector<FakeTask> fake = {{1e-3, 4e-3, 20}, {1e-3, 1e-6, 1}};
  TaskScheduler gradient({{8, 0}, {1, 0}}, {.warmup_trials = 8});
  TaskScheduler round_robin({{8, 0}, {1, 0}}, {.policy = TaskSchedulePolicy::kRoundRobin});
  const double g = RunTrials(gradient, fake, 200);
  const double r = RunTrials(round_robin, fake, 200);
  EXPECT_GT(gradient.trials(0), 150);
  EXPECT_LT(g, r);
}

TEST(TaskSchedulerTest, TaskWithoutSuccessIsTriedFirstAfterWarmup) {
  TaskScheduler scheduler({{1, 0}, {1, 0}}, {.warmup_trials = 1});
  ASSERT_EQ(*scheduler.NextTask(), 0);
  ASSERT_TRUE(scheduler.OnResult(0, 1.0).ok());
  ASSERT_EQ(*scheduler.NextTask(), 1);
  ASSERT_TRUE(scheduler.OnResult(1, 0).ok());  // failed
  EXPECT_EQ(*scheduler.NextTask(), 1);
}

TEST(TaskSchedulerTest, BudgetAndEarlyStoppingEndTasks) {
  TaskScheduler scheduler({{1, 0}, {1, 0}},
                          {.max_trials_per_task = 5, .warmup_trials = 0, .early_stopping = 2});
  int issued = 0;
  while (std::optional<int> t = scheduler.NextTask()) {
    ASSERT_TRUE(scheduler.OnResult(*t, *t == 0 ? 1.0 / (scheduler.trials(0) + 1) : 1.0).ok());
    ASSERT_LT(++issued, 100);
  }
  EXPECT_EQ(scheduler.trials(0), 5);  // improves every trial: the budget ends it
  EXPECT_EQ(scheduler.trials(1), 2);  // best at position 0: AutoTVM stops at 0 + 2 results
  EXPECT_TRUE(scheduler.AllDone());
}

TEST(TaskSchedulerTest, InFlightTrialsCountAgainstTheBudget) {
  TaskScheduler scheduler({{1, 0}}, {.max_trials_per_task = 2});
  EXPECT_TRUE(scheduler.NextTask().has_value());
  EXPECT_TRUE(scheduler.NextTask().has_value());
  EXPECT_FALSE(scheduler.NextTask().has_value());
  EXPECT_FALSE(scheduler.AllDone());
  ASSERT_TRUE(scheduler.OnResult(0, 1.0).ok());
  ASSERT_TRUE(scheduler.OnResult(0, 2.0).ok());
  EXPECT_TRUE(scheduler.AllDone());
  EXPECT_THAT(scheduler.OnResult(0, 1.0).message(), HasSubstr("no trial in flight"));
  EXPECT_FALSE(scheduler.OnResult(7, 1.0).ok());
}

TEST(TaskSchedulerTest, StateSurvivesARestart) {
  std::vector<FakeTask> fake = {{1e-3, 4e-3, 20}, {2e-3, 1e-3, 5}};
  TaskScheduler first({{2, 0}, {1, 0}}, {.warmup_trials = 4});
  RunTrials(first, fake, 30);
  TaskScheduler second({{2, 0}, {1, 0}}, {.warmup_trials = 4});
  ASSERT_TRUE(second.RestoreJson(first.ToJson()).ok());
  EXPECT_DOUBLE_EQ(second.EstimatedLatency(), first.EstimatedLatency());
  for (int i = 0; i < 20; ++i) {
    const int a = *first.NextTask(), b = *second.NextTask();
    ASSERT_EQ(a, b) << "step " << i;
    ASSERT_TRUE(first.OnResult(a, fake[a].Cost(first.trials(a) + 1)).ok());
    ASSERT_TRUE(second.OnResult(b, fake[b].Cost(second.trials(b) + 1)).ok());
  }
}

TEST(TaskSchedulerTest, CorruptStateIsRefusedByName) {
  TaskScheduler scheduler({{1, 0}}, {});
  EXPECT_FALSE(scheduler.RestoreJson(nlohmann::json::object()).ok());
  nlohmann::json bad = scheduler.ToJson();
  bad["tasks"][0]["trials"] = 3;
  EXPECT_THAT(scheduler.RestoreJson(bad).message(), HasSubstr("history entries"));
}

TEST(TaskSchedulerTest, EstimatedLatencyWeighsBestCosts) {
  TaskScheduler scheduler({{3, 0}, {1, 0}}, {.warmup_trials = 1});
  ASSERT_TRUE(scheduler.OnResult(*scheduler.NextTask(), 2.0).ok());
  EXPECT_DOUBLE_EQ(scheduler.EstimatedLatency(), 6.0);
  EXPECT_DOUBLE_EQ(scheduler.EstimatedLatency(10.0), 16.0);
  EXPECT_FALSE(ParseTaskSchedulePolicy("fastest").ok());
  EXPECT_EQ(*ParseTaskSchedulePolicy("round_robin"), TaskSchedulePolicy::kRoundRobin);
}

}  // namespace
}  // namespace tunefleet
