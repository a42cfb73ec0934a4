#include "tracker/gauges.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tunefleet {
namespace {

std::vector<WorkerCount> CountWorkers(const WorkerRegistry& workers) {
  std::map<std::pair<int, std::string>, WorkerCount> counts;
  for (const auto& [id, w] : workers.all()) {
    const WorkerRole role = MetricsRole(w->role());
    WorkerCount& c = counts[{static_cast<int>(role), w->registration.device_key()}];
    c.role = role;
    c.device_key = w->registration.device_key();
    if (!w->quarantine.empty())
      ++c.quarantined;
    else if (w->calibrating || w->calibration_wanted || w->busy_units() >= w->capacity())
      ++c.busy;
    else
      ++c.free;
  }
  std::vector<WorkerCount> out;
  for (auto& [key, c] : counts) out.push_back(std::move(c));
  return out;
}

std::vector<KeyCalibration> CalibrationsByKey(const WorkerRegistry& workers) {
  std::map<std::string, KeyCalibration> keys;
  for (const auto& [id, w] : workers.all()) {
    if (w->role() != proto::AGENT || !w->calibration.has_value() ||
        !w->calibration->error().empty()) {
      continue;
    }
    const proto::Calibration& c = *w->calibration;
    KeyCalibration& k = keys[w->registration.device_key()];
    k.device_key = w->registration.device_key();
    k.gflops_min = k.agents == 0 ? c.gflops() : std::min(k.gflops_min, c.gflops());
    k.gflops_max = std::max(k.gflops_max, c.gflops());
    k.noise_max = std::max(k.noise_max, c.noise());
    ++k.agents;
  }
  std::vector<KeyCalibration> out;
  for (auto& [key, k] : keys) out.push_back(std::move(k));
  return out;
}

// The count of jobs in `state` (null for a state not counted).
int64_t* JobsIn(proto::JobState state, JobCounts& counts) {
  if (state == proto::QUEUED) return &counts.queued;
  if (state == proto::RUNNING) return &counts.running;
  if (state == proto::SUCCEEDED) return &counts.succeeded;
  if (state == proto::FAILED) return &counts.failed;
  if (state == proto::CANCELLED) return &counts.cancelled;
  return nullptr;
}

// Age of the trial at the front of `queue`, 0 if empty.
double FrontAge(const Job& job, const std::deque<int64_t>& queue, double now) {
  return queue.empty() ? 0 : now - job.trials.at(queue.front()).queued_at;
}

}  // namespace

void RefreshGauges(const JobTable& jobs, const WorkerRegistry& workers, double now,
                   TrackerMetricsInterface& metrics) {
  metrics.SetWorkers(CountWorkers(workers));
  metrics.SetCalibrations(CalibrationsByKey(workers));

  QueueStat build;
  build.stage = QueueStage::kBuild;
  std::map<std::string, QueueStat> measure;
  JobStats stats;
  std::map<std::string, double> best;
  for (const auto& [id, job] : jobs.by_id()) {
    JobCounts& counts = stats.of(PriorityClassOf(job->stored.spec.priority()));
    if (int64_t* count = JobsIn(job->stored.state, counts)) ++*count;
    for (int i = 0; i < static_cast<int>(job->tasks.size()); ++i) {
      const JobTask& t = job->tasks[i];
      if (!t.best.has_best()) continue;
      double& b = best[job->stored.spec.tasks(i).task().target()];
      b = std::max(b, t.best.Gflops(t.task->workload().flops()));
    }
    if (job->tasks.size() > 1) {
      if (job->finished()) {
        ++stats.model_jobs_finished;
      } else if (job->stored.state == proto::QUEUED) {
        ++stats.model_jobs_queued;
      } else {
        ++stats.model_jobs_running;
        for (const JobTask& t : job->tasks) {
          ++(t.best.has_best() ? stats.model_tasks_tuned : stats.model_tasks_untuned);
        }
      }
    }
    if (job->finished()) continue;
    counts.trials_done += job->done;
    counts.trials_target += job->stored.spec.n_trial();
    build.depth += static_cast<int64_t>(job->to_build.size());
    build.oldest_age_seconds =
        std::max(build.oldest_age_seconds, FrontAge(*job, job->to_build, now));
    QueueStat& q = measure[job->stored.spec.device_key()];
    q.stage = QueueStage::kMeasure;
    q.device_key = job->stored.spec.device_key();
    q.depth += static_cast<int64_t>(job->to_measure.size());
    q.oldest_age_seconds = std::max(q.oldest_age_seconds, FrontAge(*job, job->to_measure, now));
  }
  std::vector<QueueStat> queues = {build};
  for (auto& [key, q] : measure) queues.push_back(q);
  metrics.SetQueues(queues);
  for (auto& [target, gflops] : best) stats.best_gflops.push_back({target, gflops});
  metrics.SetJobs(stats);
}

}  // namespace tunefleet
