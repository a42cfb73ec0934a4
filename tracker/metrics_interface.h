// TrackerMetricsInterface: what the tracker's scheduler and services report
// for monitoring, with no dependency on a metrics library. TrackerMetrics
// (metrics.h) exports it in Prometheus format; FakeTrackerMetrics
// (fake_metrics.h) records it for tests.
//
//   metrics->TrialFinished(result.error_no());
//   metrics->ObserveDispatch(QueueStage::kMeasure, seconds_in_queue);
//
// Every label a call can produce comes from a small fixed set (roles, stages,
// requeue reasons, device keys, target strings); nothing here takes a job id,
// trial id, worker name or address. Calls are cheap and thread-safe: the
// per-event ones (TrialFinished, Requeued, Observe*, Message*, Rejected) may
// be made under the scheduler's lock.
#ifndef TUNEFLEET_TRACKER_METRICS_INTERFACE_H_
#define TUNEFLEET_TRACKER_METRICS_INTERFACE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tunefleet {

// Label `role` of tunefleet_workers and tunefleet_stream_messages_total.
enum class WorkerRole { kBuilder = 0, kAgent = 1, kTuner = 2 };
inline constexpr int kNumWorkerRoles = 3;
// Label `stage` of the queue gauges and the dispatch histogram.
enum class QueueStage { kBuild = 0, kMeasure = 1 };
inline constexpr int kNumQueueStages = 2;
// Label `reason` of tunefleet_trial_requeues_total.
enum class RequeueReason { kWorkerLost = 0, kLeaseExpired = 1 };
inline constexpr int kNumRequeueReasons = 2;

// Label `priority_class` of tunefleet_jobs and tunefleet_job_trials: a job's
// priority (JobSpec.priority, its weight in fair sharing, at most 100) in
// powers of two, so the label has four values whatever users submit.
enum class PriorityClass { kOne = 0, kTwoToThree = 1, kFourToSeven = 2, kEightAndUp = 3 };
inline constexpr int kNumPriorityClasses = 4;
// The class of JobSpec.priority `priority` (0 and below mean 1).
inline PriorityClass PriorityClassOf(int64_t priority) {
  if (priority < 2) return PriorityClass::kOne;
  if (priority < 4) return PriorityClass::kTwoToThree;
  if (priority < 8) return PriorityClass::kFourToSeven;
  return PriorityClass::kEightAndUp;
}

// Lower-case label values: "builder", "build", "worker_lost", "2-3", ...
inline absl::string_view LabelValue(WorkerRole role) {
  constexpr absl::string_view kNames[kNumWorkerRoles] = {"builder", "agent", "tuner"};
  const int index = static_cast<int>(role);
  return index >= 0 && index < kNumWorkerRoles ? kNames[index] : "unknown";
}
inline absl::string_view LabelValue(QueueStage stage) {
  return stage == QueueStage::kBuild ? "build" : "measure";
}
inline absl::string_view LabelValue(RequeueReason reason) {
  return reason == RequeueReason::kWorkerLost ? "worker_lost" : "lease_expired";
}
inline absl::string_view LabelValue(PriorityClass priority_class) {
  constexpr absl::string_view kNames[kNumPriorityClasses] = {"1", "2-3", "4-7", "8+"};
  const int index = static_cast<int>(priority_class);
  return index >= 0 && index < kNumPriorityClasses ? kNames[index] : "unknown";
}

// Connected workers of one role and device key.
struct WorkerCount {
  WorkerRole role = WorkerRole::kAgent;
  std::string device_key;  // "" for builders and tuners
  int64_t free = 0;
  int64_t busy = 0;         // holding work, or calibrating
  int64_t quarantined = 0;  // agents kept out of measurements (tracker/agent_calibration.h)
};

// The latest calibrations of one device key's agents (those that calibrate
// and have a figure): the slowest and fastest throughput and the largest
// spread, so a dashboard sees a key's agents drift apart without a label
// per agent.
struct KeyCalibration {
  std::string device_key;
  int64_t agents = 0;
  double gflops_min = 0;
  double gflops_max = 0;
  double noise_max = 0;
};

// One user with jobs in flight, against its quota (tracker/user_quotas.h).
struct UserUsage {
  std::string user;
  int64_t jobs_in_flight = 0;
  int64_t trials_last_hour = 0;
  int64_t measuring = 0;
  std::string held;  // the quota holding its work back now, or ""
};

// One queue: the build queue (device_key "") or a device key's measure queue.
struct QueueStat {
  QueueStage stage = QueueStage::kBuild;
  std::string device_key;
  int64_t depth = 0;
  double oldest_age_seconds = 0;  // 0 when empty
};

// Best GFLOPS reached on one target string (e.g. "llvm -mcpu=skylake").
struct TargetBest {
  std::string target;
  double gflops = 0;
};

// The jobs of one priority class.
struct JobCounts {
  // Jobs by state.
  int64_t queued = 0;
  int64_t running = 0;
  int64_t succeeded = 0;
  int64_t failed = 0;
  int64_t cancelled = 0;
  // Summed over unfinished jobs: progress is trials_done / trials_target.
  int64_t trials_done = 0;
  int64_t trials_target = 0;
};

struct JobStats {
  // Indexed by PriorityClass. Per-job detail stays in the job API.
  std::array<JobCounts, kNumPriorityClasses> by_priority;
  JobCounts& of(PriorityClass priority_class) {
    return by_priority[static_cast<int>(priority_class)];
  }
  const JobCounts& of(PriorityClass priority_class) const {
    return by_priority[static_cast<int>(priority_class)];
  }
  // Among running and finished jobs, one entry per target.
  std::vector<TargetBest> best_gflops;
  // Model jobs (more than one task): by state, and the tasks of the running
  // ones with and without a successful trial yet (job detail is in the API).
  int64_t model_jobs_queued = 0;
  int64_t model_jobs_running = 0;
  int64_t model_jobs_finished = 0;
  int64_t model_tasks_tuned = 0;
  int64_t model_tasks_untuned = 0;
};

class TrackerMetricsInterface {
 public:
  virtual ~TrackerMetricsInterface() = default;

  // Snapshots: each call replaces the whole previous set. A (role, key) or
  // queue missing from the new set reads 0; a target missing from
  // best_gflops is dropped.
  virtual void SetWorkers(const std::vector<WorkerCount>& workers) = 0;
  virtual void SetQueues(const std::vector<QueueStat>& queues) = 0;
  virtual void SetJobs(const JobStats& jobs) = 0;
  virtual void SetCalibrations(const std::vector<KeyCalibration>& keys) = 0;
  virtual void SetUsers(const std::vector<UserUsage>& users) = 0;

  // A trial reached `done` with this MeasureErrorNo (out of range: unknown).
  virtual void TrialFinished(int error_no) = 0;
  // A trial went back to its queue.
  virtual void Requeued(RequeueReason reason) = 0;
  // Time a builder spent on one build; an agent on one measurement.
  virtual void ObserveBuild(double seconds) = 0;
  virtual void ObserveMeasure(absl::string_view device_key, double seconds) = 0;
  // From a trial entering a queue to the tracker sending it to a worker.
  virtual void ObserveDispatch(QueueStage stage, double seconds) = 0;
  // One message on a worker's Connect stream, received or sent.
  virtual void MessageIn(WorkerRole role) = 0;
  virtual void MessageOut(WorkerRole role) = 0;
  // A message or call refused. `reason` must come from a small fixed set of
  // constants (e.g. "unauthenticated", "permission_denied", "stale_lease").
  virtual void Rejected(absl::string_view reason) = 0;
  // The result of a lease an earlier tracker on the store gave, taken
  // (a build's when `build`, else a measurement's): work that survived a
  // takeover or restart.
  virtual void ResultAdopted(bool build) = 0;
  // An agent of `device_key` reported a calibration, which passed or
  // quarantined it.
  virtual void AgentCalibrated(absl::string_view device_key, bool quarantined) = 0;
};

// Reports nothing; for callers that run without monitoring.
class NoopTrackerMetrics final : public TrackerMetricsInterface {
 public:
  void SetWorkers(const std::vector<WorkerCount>&) override {}
  void SetQueues(const std::vector<QueueStat>&) override {}
  void SetJobs(const JobStats&) override {}
  void TrialFinished(int) override {}
  void Requeued(RequeueReason) override {}
  void ObserveBuild(double) override {}
  void ObserveMeasure(absl::string_view, double) override {}
  void ObserveDispatch(QueueStage, double) override {}
  void MessageIn(WorkerRole) override {}
  void MessageOut(WorkerRole) override {}
  void Rejected(absl::string_view) override {}
  void ResultAdopted(bool) override {}
  void SetCalibrations(const std::vector<KeyCalibration>&) override {}
  void SetUsers(const std::vector<UserUsage>&) override {}
  void AgentCalibrated(absl::string_view, bool) override {}
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_METRICS_INTERFACE_H_
