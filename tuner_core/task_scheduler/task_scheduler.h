// The task scheduler of a model job: which task gets the next trials so the
// model's estimated latency (sum over tasks of weight x best latency) falls
// fastest. Ansor's policy (Zheng et al., OSDI'20, section 6): a warm-up
// round that gives every task `warmup_trials`, then the task with the
// largest expected latency drop per trial, estimated from its recent
// progress (backward gradient over `backward_window` trials) and from how
// far it could still go (forward estimate: the larger of best / trials and
// how far it is from 1 / `beta` of the throughput the best task of its
// `group` reached, Ansor's similar-task term); a task that has not improved in
// `early_stopping` trials, or has used its `max_trials_per_task`, stops.
// Round-robin (one trial per task in turn) and sequential (each task up to
// its budget or early stop, then the next: AutoTVM's tune_tasks loop) stay
// available for comparison.
//
//   TaskScheduler scheduler(tasks, options);
//   while (std::optional<int> t = scheduler.NextTask()) {
//     ... run one trial of task *t ...
//     scheduler.OnResult(*t, cost_s_or_0_on_error);
//   }
//   double latency = scheduler.EstimatedLatency();
//
// No clocks, no threads: the caller drives it (the tracker from results as
// they arrive, local mode in its loop), and ToJson/FromJson carry its state
// across a restart.
#ifndef TUNEFLEET_TUNER_CORE_TASK_SCHEDULER_TASK_SCHEDULER_H_
#define TUNEFLEET_TUNER_CORE_TASK_SCHEDULER_TASK_SCHEDULER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tunefleet {

enum class TaskSchedulePolicy { kGradient, kRoundRobin, kSequential };

struct TaskSchedulerOptions {
  TaskSchedulePolicy policy = TaskSchedulePolicy::kGradient;
  int64_t max_trials_per_task = 1000;  // each task's budget
  int64_t warmup_trials = 16;          // per task, before the gradient policy chooses
  int64_t backward_window = 16;        // trials over which progress is measured
  double alpha = 0.2;                  // weight of the backward gradient (Ansor: 0.2)
  // Similar tasks: a task may expect to reach 1 / beta of the best GFLOPS a
  // task of its group reached (Ansor: 2).
  double beta = 2;
  // Rank tasks by expected gain per second of tuning (gain / the task's mean
  // trial time, when trials report it) rather than per trial: what matters
  // when a task's trials cost more (slow kernels take longer to measure).
  bool per_second = true;
  // Stop a task once `early_stopping` results came after its best one began
  // (AutoTVM: trials >= best_iter + early_stopping); < 0: never.
  int64_t early_stopping = 200;
};

struct SchedulerTask {
  double weight = 1;  // layers the task serves
  double flops = 0;   // of one layer (for the forward estimate's GFLOPS bound)
  // Tasks of one group are similar (same operator and template, say): their
  // throughput bounds each other's forward estimate. < 0: no group.
  int group = -1;
  // This task's budget; < 0: the options' max_trials_per_task.
  int64_t max_trials = -1;
  // Not picked by NextTask until Release(task) (a selective dependent that
  // waits for its representative); Assign and OnResult count it all along.
  bool held = false;
};

class TaskScheduler {
 public:
  TaskScheduler(std::vector<SchedulerTask> tasks, TaskSchedulerOptions options);

  // The task that should run the next trial; nothing when every task is done.
  // Several calls before OnResult are allowed (trials in flight): in-flight
  // trials count against the task's budget and rotation.
  std::optional<int> NextTask();
  // A trial of `task` in flight that the policy did not choose (e.g. one
  // replayed after a restart): counted as NextTask would have counted it.
  void Assign(int task);
  // A trial NextTask chose that will never run (its proposal was refused):
  // out of the task's in-flight count, no result.
  void Withdraw(int task);
  // The task's search has nothing more to propose (its space is exhausted):
  // it is done once its trials in flight report.
  void Exhaust(int task);
  // A held task may be picked from now on; with `max_trials` >= 0 that is
  // its budget from now on (trials it had count against it).
  void Release(int task, int64_t max_trials = -1);
  // The result of one trial of `task`: its mean cost in seconds, or <= 0 for
  // a failed trial, and what the trial took (build + measure seconds; 0:
  // unknown). InvalidArgument for an unknown task or one with no trial in
  // flight.
  [[nodiscard]] absl::Status OnResult(int task, double cost_s, double trial_seconds = 0);

  // Sum over tasks of weight x best cost; tasks without a success count
  // with `unknown_cost_s` (0 by default: left out).
  double EstimatedLatency(double unknown_cost_s = 0) const;
  double best_cost(int task) const { return state_[task].best_cost; }
  int64_t trials(int task) const { return state_[task].trials; }
  bool done(int task) const;
  bool AllDone() const;

  nlohmann::json ToJson() const;
  // Restores state saved by ToJson for the same tasks; InvalidArgument
  // naming the field otherwise. In-flight trials are not restored (their
  // results never come).
  [[nodiscard]] absl::Status RestoreJson(const nlohmann::json& saved);

 private:
  struct TaskState {
    int64_t trials = 0;  // results received
    int64_t in_flight = 0;
    double best_cost = 0;              // 0: no success yet
    int64_t best_trial = -1;           // 0-based position of the result that set best_cost
    std::vector<double> best_history;  // best_cost after each result (0 = none)
    bool exhausted = false;
    bool held = false;
    int64_t max_trials = -1;   // < 0: options_.max_trials_per_task
    double trial_seconds = 0;  // summed over the results that reported it
    int64_t timed_trials = 0;
  };

  bool Available(int task) const;
  int64_t Budget(int task) const;
  // Expected latency drop per trial of `task` (larger = more promising).
  double ExpectedGain(int task) const;

  std::vector<SchedulerTask> tasks_;
  TaskSchedulerOptions options_;
  std::vector<TaskState> state_;
  int round_robin_next_ = 0;
};

[[nodiscard]] absl::StatusOr<TaskSchedulePolicy> ParseTaskSchedulePolicy(const std::string& name);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_TASK_SCHEDULER_TASK_SCHEDULER_H_
