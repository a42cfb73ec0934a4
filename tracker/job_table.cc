#include "tracker/job_table.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
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

[[nodiscard]] absl::StatusOr<proto::JobSpec> CompleteJobSpec(proto::JobSpec spec,
                                                             const SchedulerOptions& options) {
  if (spec.n_trial() <= 0 || spec.n_trial() > options.max_trials_per_job) {
    return absl::InvalidArgumentError(absl::StrCat(
        "n_trial must be in [1, ", options.max_trials_per_job, "], got ", spec.n_trial()));
  }
  if (spec.device_key().empty()) return absl::InvalidArgumentError("device_key is empty");
  if (spec.priority() < 0) return absl::InvalidArgumentError("priority must be >= 0");
  if (spec.max_attempts() < 0) return absl::InvalidArgumentError("max_attempts must be >= 0");
  if (spec.window() < 0) return absl::InvalidArgumentError("window must be >= 0");
  if (spec.priority() == 0) spec.set_priority(1);
  if (spec.max_attempts() == 0) spec.set_max_attempts(options.default_max_attempts);
  if (spec.build_timeout_s() <= 0) spec.set_build_timeout_s(options.default_build_timeout_s);
  if (spec.tuner().empty()) spec.set_tuner("random");
  const std::vector<std::string> names = TunerNames();
  if (std::find(names.begin(), names.end(), spec.tuner()) == names.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown tuner \"", spec.tuner(), "\" (one of: ", absl::StrJoin(names, ", "), ")"));
  }
  if (!spec.has_measure()) *spec.mutable_measure() = ToProto(MeasureOptions());
  const proto::MeasureOptions& m = spec.measure();
  if (m.number() <= 0 || m.repeat() <= 0 || m.timeout_s() <= 0 || m.min_repeat_ms() < 0 ||
      m.cooldown_interval_s() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("measure options out of range (number and repeat >= 1, timeout_s > 0, "
                     "min_repeat_ms and cooldown_interval_s >= 0): ",
                     m.ShortDebugString()));
  }
  return spec;
}

proto::JobStatus StatusOf(const Job& job, const std::string& tuner_name) {
  proto::JobStatus s;
  s.set_job_id(job.stored.job_id);
  *s.mutable_spec() = job.stored.spec;
  s.set_state(job.stored.state);
  s.set_trials_done(job.done);
  s.set_trials_failed(job.failed);
  s.set_trials_in_flight(job.finished() ? 0 : job.in_flight());
  if (job.best_cost > 0 && job.task != nullptr) {
    s.set_best_gflops(job.task->workload().flops() / job.best_cost / 1e9);
    s.set_best_cost_s(job.best_cost);
    s.set_best_config_json(job.best_config_json);
  }
  s.set_message(job.store_error.empty() ? job.stored.message : job.store_error);
  s.set_created_at(job.stored.created_at);
  s.set_started_at(job.stored.started_at);
  s.set_finished_at(job.stored.finished_at);
  if (!tuner_name.empty()) s.set_tuner(tuner_name);
  return s;
}

}  // namespace tunefleet
