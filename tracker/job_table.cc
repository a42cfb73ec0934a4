#include "tracker/job_table.h"

#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "tuner_core/selective/selective_plan.h"
#include "tuner_core/task_scheduler/task_scheduler.h"
#include "tuner_core/tuners/tuner_factory.h"

namespace tunefleet {

const char* StageName(Stage stage) { return stage == Stage::kBuild ? "build" : "measure"; }

Job& JobTable::Add(std::unique_ptr<Job> job) {
  next_sequence_ = std::max(next_sequence_, job->stored.sequence + 1);
  const std::string id = job->stored.job_id;
  Job& ref = *job;
  order_.push_back(id);
  jobs_.emplace(id, std::move(job));
  return ref;
}

Job* JobTable::Find(const std::string& job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

int64_t JobTable::Watch(Job& job, JobWatcher watcher, const proto::JobEvent& first) {
  const int64_t id = next_watch_++;
  if (!watcher(first)) return id;
  if (!job.finished()) {
    job.watchers.emplace(id, std::move(watcher));
    watch_jobs_.emplace(id, job.stored.job_id);
  }
  return id;
}

void JobTable::Unwatch(int64_t subscription) {
  auto it = watch_jobs_.find(subscription);
  if (it == watch_jobs_.end()) return;
  if (Job* job = Find(it->second)) job->watchers.erase(subscription);
  watch_jobs_.erase(it);
}

void JobTable::Notify(Job& job, const proto::JobEvent& event) {
  for (auto it = job.watchers.begin(); it != job.watchers.end();) {
    if (!it->second(event)) {
      watch_jobs_.erase(it->first);
      it = job.watchers.erase(it);
    } else {
      ++it;
    }
  }
}

void JobTable::EndWatches(Job& job) {
  for (const auto& [id, watcher] : job.watchers) watch_jobs_.erase(id);
  job.watchers.clear();
}

namespace {

// A model's tasks per job: far beyond the largest models' distinct tasks
// (BERT-large has fewer than 30), small enough that a spec stays small.
constexpr int kMaxTasksPerJob = 1024;

[[nodiscard]] absl::Status CompleteTasks(proto::JobSpec& spec) {
  TF_RETURN_IF_ERROR(CanonicalizeJobTasks(spec));
  if (spec.tasks_size() == 0) return absl::InvalidArgumentError("the job has no task");
  if (spec.tasks_size() > kMaxTasksPerJob) {
    return absl::InvalidArgumentError(absl::StrCat("a job may have at most ", kMaxTasksPerJob,
                                                   " tasks, got ", spec.tasks_size()));
  }
  for (int i = 0; i < spec.tasks_size(); ++i) {
    proto::JobTask& t = *spec.mutable_tasks(i);
    if (!t.has_weight()) t.set_weight(1);
    if (!std::isfinite(t.weight()) || t.weight() <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("task ", i, ": weight must be finite and > 0, got ", t.weight()));
    }
  }
  if (spec.task_policy().empty()) spec.set_task_policy("gradient");
  TF_RETURN_IF_ERROR(ParseTaskSchedulePolicy(spec.task_policy()).status());
  if (spec.has_queue_timeout_s() &&
      !(std::isfinite(spec.queue_timeout_s()) && spec.queue_timeout_s() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("queue_timeout_s must be > 0 seconds, got ", spec.queue_timeout_s()));
  }
  if (spec.has_time_budget_s() &&
      !(std::isfinite(spec.time_budget_s()) && spec.time_budget_s() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("time_budget_s must be > 0 seconds, got ", spec.time_budget_s()));
  }
  if (spec.has_trials_per_task() && spec.trials_per_task() <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("trials_per_task must be >= 1, got ", spec.trials_per_task()));
  }
  if (!spec.selective().empty()) {
    absl::StatusOr<TopK> top = ParseTopK(spec.selective());
    if (!top.ok()) return absl::InvalidArgumentError(top.status().message());
  }
  if (spec.has_selective_followup_trials() && spec.selective_followup_trials() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("selective_followup_trials must be >= 0, got ",
                                                   spec.selective_followup_trials()));
  }
  if (spec.has_selective_threshold() &&
      !(spec.selective_threshold() >= 0 && spec.selective_threshold() <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("selective_threshold must be in [0, 1], got ", spec.selective_threshold()));
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::StatusOr<proto::JobSpec> CompleteJobSpec(proto::JobSpec spec,
                                                             const SchedulerOptions& options) {
  if (spec.n_trial() <= 0 || spec.n_trial() > options.max_trials_per_job) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_trial must be in [1, ", options.max_trials_per_job, "], got ", spec.n_trial()));
  }
  if (spec.device_key().empty()) return absl::InvalidArgumentError("device_key is empty");
  if (spec.priority() < 0 || spec.priority() > kMaxJobPriority) {
    return absl::InvalidArgumentError(
        absl::StrCat("priority must be in [0, ", kMaxJobPriority, "], got ", spec.priority()));
  }
  if (spec.max_attempts() < 0 || spec.max_attempts() > kMaxJobAttempts) {
    return absl::InvalidArgumentError(absl::StrCat("max_attempts must be in [0, ", kMaxJobAttempts,
                                                   "] (0: the default), got ",
                                                   spec.max_attempts()));
  }
  if (spec.window() < 0 || spec.window() > kMaxJobWindow) {
    return absl::InvalidArgumentError(absl::StrCat("window must be in [0, ", kMaxJobWindow,
                                                   "] (0: automatic), got ", spec.window()));
  }
  if (!(spec.build_timeout_s() <= kMaxBuildTimeoutS)) {  // NaN too
    return absl::InvalidArgumentError(absl::StrCat(
        "build_timeout_s must be at most ", kMaxBuildTimeoutS, " s, got ", spec.build_timeout_s()));
  }
  if (spec.pretuned_family().size() > kMaxPretunedFamilyBytes) {
    return absl::InvalidArgumentError(absl::StrCat("pretuned_family must be at most ",
                                                   kMaxPretunedFamilyBytes, " bytes, got ",
                                                   spec.pretuned_family().size()));
  }
  if (spec.has_plan_size() && (spec.plan_size() < 1 || spec.plan_size() > kMaxPlanSize)) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan_size must be in [1, ", kMaxPlanSize, "], got ", spec.plan_size()));
  }
  if (spec.priority() == 0) spec.set_priority(1);
  if (spec.max_attempts() == 0) spec.set_max_attempts(options.default_max_attempts);
  if (spec.build_timeout_s() <= 0) spec.set_build_timeout_s(options.default_build_timeout_s);
  if (spec.tuner().empty()) spec.set_tuner("random");
  const std::vector<std::string> names = TunerNames();
  if (std::find(names.begin(), names.end(), spec.tuner()) == names.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown tuner \"", spec.tuner(), "\" (one of: ", absl::StrJoin(names, ", "), ")"));
  }
  // Unset measure fields keep their defaults (proto_convert/run_request);
  // the stored spec says them all, so every reader sees the same values.
  const absl::Status measure = ValidateMeasureOptions(spec.measure());
  if (!measure.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("measure options: ", measure.message()));
  }
  *spec.mutable_measure() = ToProto(ResolveMeasureOptions(spec.measure()));
  if (!spec.has_validate_top_k()) spec.set_validate_top_k(kDefaultValidateTopK);
  if (!spec.has_validation_passes()) spec.set_validation_passes(kDefaultValidationPasses);
  if (spec.validate_top_k() < 0 || spec.validate_top_k() > kMaxValidateTopK) {
    return absl::InvalidArgumentError(absl::StrCat(
        "validate_top_k must be in [0, ", kMaxValidateTopK, "], got ", spec.validate_top_k()));
  }
  if (spec.validation_passes() < 1 || spec.validation_passes() > kMaxValidationPasses) {
    return absl::InvalidArgumentError(absl::StrCat("validation_passes must be in [1, ",
                                                   kMaxValidationPasses, "], got ",
                                                   spec.validation_passes()));
  }
  TF_RETURN_IF_ERROR(CompleteTasks(spec));
  if (spec.tuner() == "given") {
    if (spec.given_configs_size() == 0 || spec.tasks_size() != 1) {
      return absl::InvalidArgumentError("tuner \"given\" needs given_configs and exactly one task");
    }
    if (spec.n_trial() < spec.given_configs_size()) {
      return absl::InvalidArgumentError(absl::StrCat("n_trial ", spec.n_trial(),
                                                     " is fewer than the ",
                                                     spec.given_configs_size(), " given configs"));
    }
  } else if (spec.given_configs_size() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("given_configs are for tuner \"given\", not \"", spec.tuner(), "\""));
  }
  return spec;
}

[[nodiscard]] absl::StatusOr<std::vector<JobTask>> LoadJobTasks(const proto::JobSpec& spec) {
  std::vector<JobTask> tasks;
  for (int i = 0; i < spec.tasks_size(); ++i) {
    const proto::JobTask& t = spec.tasks(i);
    absl::StatusOr<std::unique_ptr<Task>> task = TaskFromSpec(t.task());
    if (!task.ok()) {
      return absl::Status(task.status().code(),
                          absl::StrCat("task ", i, ": ", task.status().message()));
    }
    if ((*task)->space().size() <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("task ", i, ": its config space is empty"));
    }
    for (int64_t index : spec.given_configs()) {
      if (index < 0 || index >= (*task)->space().size()) {
        return absl::InvalidArgumentError(absl::StrCat("given config ", index, " is outside task ",
                                                       i, "'s space (0..",
                                                       (*task)->space().size() - 1, ")"));
      }
    }
    JobTask& loaded = tasks.emplace_back();
    loaded.weight = t.has_weight() ? t.weight() : 1;
    loaded.name = t.name().empty() ? (*task)->workload().Describe() : t.name();
    loaded.task = std::move(*task);
  }
  return tasks;
}

namespace {

// A model job's confirmations in one line: tasks confirmed on several
// agents, and those whose agents disagree.
std::string ModelConfirmation(const Job& job) {
  int validated = 0, confirmed = 0;
  std::vector<std::string> disagree;
  for (size_t i = 0; i < job.tasks.size(); ++i) {
    const JobTask& t = job.tasks[i];
    if (t.validated_trial < 0) continue;
    ++validated;
    if (absl::StartsWith(t.confirmation, "confirmed")) ++confirmed;
    if (t.agents_disagree) disagree.push_back(absl::StrCat(i));
  }
  if (validated == 0) return "";
  std::string line =
      absl::StrCat(confirmed, " of ", validated, " validated tasks confirmed on a second agent");
  if (!disagree.empty()) {
    absl::StrAppend(&line, "; agents disagree on task(s) ", absl::StrJoin(disagree, ", "));
  }
  return line;
}

}  // namespace

proto::JobStatus StatusOf(const Job& job, const std::string& tuner_name) {
  proto::JobStatus s;
  s.set_job_id(job.stored.job_id);
  *s.mutable_spec() = job.stored.spec;
  s.set_state(job.stored.state);
  s.set_trials_done(job.done);
  s.set_trials_failed(job.failed);
  s.set_trials_in_flight(job.finished() ? 0 : job.in_flight());
  double latency = 0;
  int untuned = 0;
  for (size_t i = 0; i < job.tasks.size(); ++i) {
    const JobTask& t = job.tasks[i];
    proto::TaskStatus* ts = s.add_tasks();
    ts->set_index(static_cast<int32_t>(i));
    ts->set_name(t.name);
    ts->set_weight(t.weight);
    ts->set_trials_done(t.done);
    ts->set_trials_failed(t.failed);
    ts->set_trials_in_flight(job.finished() ? 0 : t.trials - t.done);
    if (t.validated_trial >= 0) {
      // The validated winner: the median of its passes, beside the search's best.
      const double cost = t.validated.cost_s();
      ts->set_best_figure("validated");
      ts->set_best_cost_s(cost);
      ts->set_best_gflops(t.task->workload().flops() / cost / 1e9);
      ts->set_best_config_json(job.trials.at(t.validated_trial).config_json);
      ts->set_best_search_cost_s(t.best.cost_s());
      ts->set_best_rel_spread(t.validated.rel_spread());
      ts->set_best_validation_passes(static_cast<int32_t>(t.validated.pass_costs.size()));
      ts->set_confirmation(t.confirmation);
      latency += t.weight * cost;
    } else if (t.best.has_best()) {
      ts->set_best_figure("search");
      ts->set_best_cost_s(t.best.cost_s());
      ts->set_best_gflops(t.best.Gflops(t.task->workload().flops()));
      ts->set_best_config_json(t.best_config_json);
      ts->set_best_search_cost_s(t.best.cost_s());
      latency += t.weight * t.best.cost_s();
    } else {
      ++untuned;
    }
  }
  s.set_estimated_latency_s(latency);
  s.set_untuned_tasks(untuned);
  // A one-task job's best is its task's (the fields single-task clients read).
  if (job.tasks.size() == 1 && job.tasks[0].best.has_best()) {
    const proto::TaskStatus& only = s.tasks(0);
    s.set_best_gflops(only.best_gflops());
    s.set_best_cost_s(only.best_cost_s());
    s.set_best_config_json(only.best_config_json());
    s.set_best_figure(only.best_figure());
    s.set_best_search_cost_s(only.best_search_cost_s());
    s.set_best_rel_spread(only.best_rel_spread());
    s.set_confirmation(only.confirmation());
  } else if (untuned < static_cast<int>(job.tasks.size())) {
    // A model job: validated once every tuned task's best is.
    bool all_validated = true;
    for (const JobTask& t : job.tasks)
      all_validated &= !t.best.has_best() || t.validated_trial >= 0;
    s.set_best_figure(all_validated ? "validated" : "search");
    s.set_confirmation(ModelConfirmation(job));
  }
  s.set_validations_total(job.validations);
  s.set_validations_done(job.validations_done);
  s.set_message(job.store_error.empty() ? job.stored.message : job.store_error);
  s.set_created_at(job.stored.created_at);
  s.set_started_at(job.stored.started_at);
  s.set_finished_at(job.stored.finished_at);
  if (!tuner_name.empty()) s.set_tuner(tuner_name);
  return s;
}

}  // namespace tunefleet
