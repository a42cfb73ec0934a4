#include "tuner_core/task_scheduler/task_scheduler.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tunefleet {

TaskScheduler::TaskScheduler(std::vector<SchedulerTask> tasks, TaskSchedulerOptions options)
    : tasks_(std::move(tasks)), options_(options), state_(tasks_.size()) {
  for (size_t t = 0; t < tasks_.size(); ++t) {
    state_[t].held = tasks_[t].held;
    state_[t].max_trials = tasks_[t].max_trials;
  }
}

bool TaskScheduler::done(int task) const {
  const TaskState& s = state_[task];
  if (s.exhausted || s.trials + s.in_flight >= Budget(task)) return true;
  // Early stopping counts only results: a task waiting on results may still gain.
  return options_.early_stopping >= 0 && s.best_cost > 0 &&
         s.trials - s.best_trial >= options_.early_stopping;
}

bool TaskScheduler::AllDone() const {
  for (size_t t = 0; t < state_.size(); ++t) {
    if (!done(static_cast<int>(t)) || state_[t].in_flight > 0) return false;
  }
  return true;
}

bool TaskScheduler::Available(int task) const { return !state_[task].held && !done(task); }

int64_t TaskScheduler::Budget(int task) const {
  return state_[task].max_trials >= 0 ? state_[task].max_trials : options_.max_trials_per_task;
}

double TaskScheduler::ExpectedGain(int task) const {
  const TaskState& s = state_[task];
  if (s.best_cost <= 0) return std::numeric_limits<double>::infinity();  // nothing works yet
  // Backward: the drop of best latency over the last window of results.
  const int64_t n = static_cast<int64_t>(s.best_history.size());
  const int64_t window = std::min<int64_t>(options_.backward_window, n);
  double backward = 0;
  if (window > 0) {
    double before = s.best_history[n - window];
    if (before <= 0) before = s.best_cost;  // the window starts before the first success
    backward = (before - s.best_cost) / window;
  }
  // Forward: optimistic, the best could still drop by best / trials per trial,
  // or down to the cost at 1 / beta of the best throughput of its group.
  double forward = s.best_cost / std::max<int64_t>(1, s.trials);
  if (tasks_[task].group >= 0 && tasks_[task].flops > 0) {
    double best_similar_flops_per_s = 0;
    for (size_t k = 0; k < tasks_.size(); ++k) {
      if (tasks_[k].group != tasks_[task].group || state_[k].best_cost <= 0) continue;
      best_similar_flops_per_s =
          std::max(best_similar_flops_per_s, tasks_[k].flops / state_[k].best_cost);
    }
    if (best_similar_flops_per_s > 0) {
      const double reachable_cost = options_.beta * tasks_[task].flops / best_similar_flops_per_s;
      forward = std::max(forward, s.best_cost - reachable_cost);
    }
  }
  const double per_trial =
      tasks_[task].weight * (options_.alpha * backward + (1 - options_.alpha) * forward);
  if (!options_.per_second || s.timed_trials == 0 || s.trial_seconds <= 0) return per_trial;
  return per_trial / (s.trial_seconds / static_cast<double>(s.timed_trials));
}

std::optional<int> TaskScheduler::NextTask() {
  const int n = static_cast<int>(tasks_.size());
  if (n == 0) return std::nullopt;
  std::optional<int> chosen;
  if (options_.policy == TaskSchedulePolicy::kSequential) {
    for (int t = 0; t < n && !chosen; ++t) {
      if (Available(t)) chosen = t;
    }
  } else if (options_.policy == TaskSchedulePolicy::kRoundRobin) {
    for (int k = 0; k < n && !chosen; ++k) {
      const int t = (round_robin_next_ + k) % n;
      if (Available(t)) chosen = t;
    }
    if (chosen) round_robin_next_ = (*chosen + 1) % n;
  } else {
    // Warm-up first: the task with the fewest trials below warmup_trials.
    for (int t = 0; t < n; ++t) {
      if (!Available(t)) continue;
      const int64_t used = state_[t].trials + state_[t].in_flight;
      if (used < options_.warmup_trials &&
          (!chosen || used < state_[*chosen].trials + state_[*chosen].in_flight)) {
        chosen = t;
      }
    }
    if (!chosen) {
      double best_gain = -1;
      for (int t = 0; t < n; ++t) {
        if (!Available(t)) continue;
        const double gain = ExpectedGain(t);
        if (!chosen || gain > best_gain) {
          chosen = t;
          best_gain = gain;
        }
      }
    }
  }
  if (chosen) ++state_[*chosen].in_flight;
  return chosen;
}

void TaskScheduler::Assign(int task) {
  if (task >= 0 && task < static_cast<int>(state_.size())) ++state_[task].in_flight;
}

void TaskScheduler::Withdraw(int task) {
  if (task >= 0 && task < static_cast<int>(state_.size()) && state_[task].in_flight > 0) {
    --state_[task].in_flight;
  }
}

void TaskScheduler::Exhaust(int task) {
  if (task >= 0 && task < static_cast<int>(state_.size())) state_[task].exhausted = true;
}

void TaskScheduler::Release(int task, int64_t max_trials) {
  if (task < 0 || task >= static_cast<int>(state_.size())) return;
  state_[task].held = false;
  if (max_trials >= 0) state_[task].max_trials = max_trials;
}

absl::Status TaskScheduler::OnResult(int task, double cost_s, double trial_seconds) {
  if (task < 0 || task >= static_cast<int>(tasks_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("task scheduler: no task ", task));
  }
  TaskState& s = state_[task];
  if (s.in_flight <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("task scheduler: a result for task ", task, ", which has no trial in flight"));
  }
  --s.in_flight;
  ++s.trials;
  if (trial_seconds > 0) {
    s.trial_seconds += trial_seconds;
    ++s.timed_trials;
  }
  if (cost_s > 0 && (s.best_cost <= 0 || cost_s < s.best_cost)) {
    s.best_cost = cost_s;
    s.best_trial = s.trials - 1;
  }
  s.best_history.push_back(s.best_cost);
  return absl::OkStatus();
}

double TaskScheduler::EstimatedLatency(double unknown_cost_s) const {
  double total = 0;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const double cost = state_[t].best_cost > 0 ? state_[t].best_cost : unknown_cost_s;
    total += tasks_[t].weight * cost;
  }
  return total;
}

nlohmann::json TaskScheduler::ToJson() const {
  nlohmann::json tasks = nlohmann::json::array();
  for (const TaskState& s : state_) {
    tasks.push_back({{"trials", s.trials},
                     {"best_cost", s.best_cost},
                     {"best_trial", s.best_trial},
                     {"best_history", s.best_history},
                     {"exhausted", s.exhausted},
                     {"held", s.held},
                     {"max_trials", s.max_trials},
                     {"trial_seconds", s.trial_seconds},
                     {"timed_trials", s.timed_trials}});
  }
  return {{"round_robin_next", round_robin_next_}, {"tasks", tasks}};
}

absl::Status TaskScheduler::RestoreJson(const nlohmann::json& saved) {
  if (!saved.is_object() || !saved.contains("tasks") || !saved["tasks"].is_array() ||
      saved["tasks"].size() != tasks_.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task scheduler state: \"tasks\" must be an array of ", tasks_.size(), " entries"));
  }
  std::vector<TaskState> restored(tasks_.size());
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const nlohmann::json& j = saved["tasks"][t];
    if (!j.is_object() || !j.value("trials", nlohmann::json()).is_number_integer() ||
        !j.value("best_cost", nlohmann::json()).is_number() ||
        !j.value("best_trial", nlohmann::json()).is_number_integer() ||
        !j.value("best_history", nlohmann::json()).is_array()) {
      return absl::InvalidArgumentError(absl::StrCat("task scheduler state: task ", t,
                                                     " lacks trials, best_cost, best_trial or "
                                                     "best_history"));
    }
    TaskState& s = restored[t];
    s.trials = j["trials"].get<int64_t>();
    s.best_cost = j["best_cost"].get<double>();
    s.best_trial = j["best_trial"].get<int64_t>();
    s.exhausted = j.value("exhausted", false);
    s.held = j.value("held", tasks_[t].held);
    s.max_trials = j.value("max_trials", tasks_[t].max_trials);
    s.trial_seconds = j.value("trial_seconds", 0.0);
    s.timed_trials = j.value("timed_trials", int64_t{0});
    for (const nlohmann::json& v : j["best_history"]) {
      if (!v.is_number()) {
        return absl::InvalidArgumentError(
            absl::StrCat("task scheduler state: task ", t, ": best_history holds a non-number"));
      }
      s.best_history.push_back(v.get<double>());
    }
    if (s.trials < 0 || static_cast<int64_t>(s.best_history.size()) != s.trials) {
      return absl::InvalidArgumentError(absl::StrCat("task scheduler state: task ", t, ": ",
                                                     s.best_history.size(), " history entries for ",
                                                     s.trials, " trials"));
    }
  }
  state_ = std::move(restored);
  round_robin_next_ = saved.value("round_robin_next", 0) % std::max<int>(1, tasks_.size());
  return absl::OkStatus();
}

[[nodiscard]] absl::StatusOr<TaskSchedulePolicy> ParseTaskSchedulePolicy(const std::string& name) {
  if (name == "gradient") return TaskSchedulePolicy::kGradient;
  if (name == "round_robin") return TaskSchedulePolicy::kRoundRobin;
  if (name == "sequential") return TaskSchedulePolicy::kSequential;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown task scheduler '", name, "' (gradient, round_robin, sequential)"));
}

}  // namespace tunefleet
