// Scheduler: the tracker's one entry point for the service layer
// (worker_gateway.h, job_service.h), a facade that owns and wires the parts
// that each do one job:
//
//   JobTable        jobs, their trials, queues, status and watchers
//   WorkerRegistry  connected workers; ListDevices
//   StoreWriter     every write to the Store
//   TrialLifecycle  trial and job transitions; nothing acknowledged before
//                   its store write succeeded
//   LeaseKeeper     leases, deadlines, requeue of lost work, max_attempts
//   Dispatcher      jobs to tuners, builds to builders, measurements to the
//                   agents of each device key; stride scheduling; isolation
//   RefreshGauges   the point-in-time metrics (gauges.h)
//
// No gRPC here: everything the scheduler sends goes through an Outbox per
// worker stream, so it is testable with fake outboxes, a fake store and a
// FakeClock. After every event the facade lets the Dispatcher hand out all
// the work that can go.
//
// Thread-safety: every public method may be called from any thread; one
// mutex guards all parts. Outbox::Send and JobWatchers are called with that
// mutex held, so they must only queue (never call back into the Scheduler).
#ifndef TUNEFLEET_TRACKER_SCHEDULER_H_
#define TUNEFLEET_TRACKER_SCHEDULER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "proto/fleet.pb.h"
#include "tracker/agent_calibration.h"
#include "tracker/dispatcher.h"
#include "tracker/job_table.h"
#include "tracker/lease_keeper.h"
#include "tracker/metrics_interface.h"
#include "tracker/outbox.h"
#include "tracker/scheduler_options.h"
#include "tracker/store/store.h"
#include "tracker/store_writer.h"
#include "tracker/trial_lifecycle.h"
#include "tracker/worker_registry.h"

namespace tunefleet {

class Scheduler {
 public:
  // Loads every job from `store` and resumes the unfinished ones (their
  // unfinished trials go back to be built). `store` and `clock` must outlive
  // the scheduler; `metrics` may be null.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Scheduler>> Create(
      Store* store, TrackerMetricsInterface* metrics, SchedulerOptions options,
      ClockInterface* clock);

  // ---- job API (JobService)
  // InvalidArgument naming the problem: unknown workload or template,
  // malformed args, unsupported target, n_trial out of range, ...
  [[nodiscard]] absl::StatusOr<proto::JobStatus> SubmitJob(const proto::JobSpec& spec);
  [[nodiscard]] absl::StatusOr<proto::JobStatus> GetJob(const std::string& job_id);
  // The store's error (nothing changed) if it cannot record the cancellation.
  [[nodiscard]] absl::StatusOr<proto::JobStatus> CancelJob(const std::string& job_id);
  std::vector<proto::JobStatus> ListJobs(bool include_finished);
  [[nodiscard]] absl::StatusOr<proto::BestConfigResponse> BestConfig(
      const proto::BestConfigRequest& request);
  // The record lines of one job (of one of its tasks with task_index) or,
  // with no job_id, of every job.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> ExportRecords(
      const proto::ExportRecordsRequest& request);
  proto::ListDevicesResponse ListDevices();
  proto::QueueSummaryResponse QueueSummary();
  // Subscribes `watcher` to the job's events; it first receives one event
  // with the current status (trial_id -1). Returns a subscription id.
  [[nodiscard]] absl::StatusOr<int64_t> WatchJob(const std::string& job_id, JobWatcher watcher);
  void Unwatch(int64_t subscription);

  // ---- worker streams (WorkerGateway)
  // InvalidArgument for a malformed registration; AlreadyExists when a live
  // worker has this name (the old session is closed first if it has gone
  // silent, so a restarted worker is not locked out).
  [[nodiscard]] absl::StatusOr<std::string> RegisterWorker(const proto::Register& registration,
                                                           const std::string& peer,
                                                           std::shared_ptr<Outbox> outbox);
  // Every message after Register. Problems (a result for a lease the worker
  // does not hold, a proposal for a job it does not run, a config outside
  // the space) are answered with an Error message on the stream; they never
  // disturb other work.
  void OnMessage(const std::string& worker_id, const proto::WorkerMessage& message);
  // The stream ended: requeue the worker's work, release its jobs.
  void OnDisconnect(const std::string& worker_id, const absl::Status& why);

  // Expires leases and silent workers, retries refused store writes,
  // refreshes gauges. Call periodically (the server does, every 100 ms).
  void Tick();

  const SchedulerOptions& options() const { return options_; }

 private:
  Scheduler(Store* store, TrackerMetricsInterface* metrics, SchedulerOptions options,
            ClockInterface* clock);

  // Task `index` of job `job_id` (the only task when !has_index and the job
  // has one; null when !has_index, it has several and !required); NotFound
  // or InvalidArgument naming the job and the index.
  [[nodiscard]] absl::StatusOr<const JobTask*> TaskOfJob(const std::string& job_id, bool has_index,
                                                         int32_t index, bool required)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleBuildResult(Worker& builder, const proto::BuildResult& result, double received_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleMeasureResult(Worker& agent, const proto::MeasureResult& result, double received_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleCalibration(Worker& agent, const proto::Calibration& calibration, double received_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandlePropose(Worker& tuner, const proto::ProposeTrials& propose, double received_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A `stage` result for `lease_id`, which this tracker did not give: when a
  // predecessor on the store gave it to `worker` (LeaseKeeper::Claim) and
  // its trial still waits for that stage, the trial, taken out of its queue
  // (or from the worker this tracker leased it to since), to be answered by
  // the result: in-flight work survives a takeover or restart, counted
  // once. Otherwise {null, null}: silently for a trial answered already
  // (a resend), else after answering the worker with why not.
  std::pair<Job*, Trial*> AdoptResult(Worker& worker, const std::string& lease_id, Stage stage)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The trial a `stage` result for `lease_id` answers: of a lease this
  // tracker gave `worker` (`leased`; the caller ends it; a revoked one's
  // result does not count), else, with `adopt`, of an earlier tracker's
  // (AdoptResult). trial null: none.
  struct ResultTrial {
    Job* job = nullptr;
    Trial* trial = nullptr;
    bool leased = false;
    bool counts = true;
  };
  ResultTrial TrialOfResult(Worker& worker, const std::string& lease_id, Stage stage, bool adopt)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `worker` has `role`; if not, answers it with PermissionDenied(`refusal`).
  bool HasRole(Worker& worker, proto::WorkerRole role, const char* refusal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendError(Worker& worker, const absl::Status& status, bool fatal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropWorker(const std::string& worker_id, const absl::Status& why, bool close_stream,
                  RequeueReason kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Store* const store_;
  TrackerMetricsInterface* const metrics_;
  const SchedulerOptions options_;
  ClockInterface* const clock_;

  absl::Mutex mu_;
  JobTable jobs_ ABSL_GUARDED_BY(mu_);
  WorkerRegistry workers_ ABSL_GUARDED_BY(mu_);
  StoreWriter store_writer_ ABSL_GUARDED_BY(mu_);
  TrialLifecycle lifecycle_ ABSL_GUARDED_BY(mu_);
  LeaseKeeper leases_ ABSL_GUARDED_BY(mu_);
  Dispatcher dispatcher_ ABSL_GUARDED_BY(mu_);
  AgentCalibrations calibrations_ ABSL_GUARDED_BY(mu_);
  double last_gauge_refresh_ ABSL_GUARDED_BY(mu_) = 0;
  double last_tick_ ABSL_GUARDED_BY(mu_) = 0;  // steady; 0 before the first
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_SCHEDULER_H_
