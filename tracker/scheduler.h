// The tracker's brain: jobs, their trials, the registry of connected
// workers, the queues between them and the leases on work in flight. No
// gRPC here: the service layer (worker_gateway.h, job_service.h) turns
// streams and calls into the methods below, and everything the scheduler
// sends goes through an Outbox per worker stream. That keeps this class
// testable with fake outboxes and a fake clock.
//
// A trial's life (DESIGN.md): proposed by the job's tuner -> to_build ->
// building (leased to one builder) -> to_measure (artifact held here) ->
// measuring (leased to one agent of the job's device key) -> done. Every
// change that must survive a restart (a job submitted, started, finished;
// a trial proposed, requeued, done) is written to the Store before it is
// acknowledged. Transient states are not stored: after a restart every
// unfinished trial is built again.
//
// Scheduling: builders take up to their parallelism, agents one measurement
// at a time; jobs share builders and each device key by stride scheduling
// weighted by priority (a job of priority 2 gets twice the turns of a job
// of priority 1 while both have work waiting). A worker that vanishes
// (stream closed, silent past worker_timeout_s, or a lease past its
// deadline) has its work requeued at the front of its queue; after
// max_attempts losses a trial ends with an error result saying why.
//
// Thread-safety: every public method may be called from any thread; one
// mutex guards the state. Outbox::Send is called with that mutex held, so it
// must only queue the message (never call back into the Scheduler).
#ifndef TUNEFLEET_TRACKER_SCHEDULER_H_
#define TUNEFLEET_TRACKER_SCHEDULER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/job_state.h"
#include "proto/fleet.pb.h"
#include "tracker/metrics_interface.h"
#include "tracker/store.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

// One worker stream, as the scheduler sees it.
class Outbox {
 public:
  virtual ~Outbox() = default;
  // Queues `message` on the stream. Must not block or call the Scheduler.
  virtual void Send(proto::TrackerMessage message) = 0;
  // Ends the stream with `status` (the worker will reconnect). The
  // scheduler calls OnDisconnect itself after closing; the stream layer
  // must not call it again for this worker.
  virtual void Close(const absl::Status& status) = 0;
};

struct SchedulerOptions {
  double heartbeat_interval_s = 1.0;   // asked of every worker
  double worker_timeout_s = 10.0;      // silent this long -> worker lost
  // A measurement lease lasts the job's timeout_s plus this (the agent may
  // have to compute the workload's reference output first).
  double measure_lease_grace_s = 120.0;
  double build_lease_grace_s = 10.0;   // a build lease: build timeout + this
  int default_max_attempts = 3;
  double default_build_timeout_s = 60.0;
  int64_t max_trials_per_job = 1000000;
  int max_window = 512;                // cap of a tuner's suggested window
  // Never build on a host while an agent on that host measures, and never
  // start a measurement on a host while it builds (hosts told apart by the
  // peer address of their streams): the compiler must not disturb the
  // timings of a one-machine fleet. Simulated agents are exempt. Hosts that
  // only build or only measure (a real cluster) overlap as usual.
  bool isolate_measurements = true;
  // Largest artifact accepted from a builder.
  int64_t max_artifact_bytes = 64LL << 20;
};

// Time source, seconds. Steady for deadlines; wall for records.
struct SchedulerClock {
  std::function<double()> steady;
  std::function<double()> wall;
  static SchedulerClock Real();
};

// A job's event subscription (WatchJob). Called with the scheduler mutex
// held: must only queue the event. Returning false unsubscribes.
using JobWatcher = std::function<bool(const proto::JobEvent& event)>;

class Scheduler {
 public:
  // Loads every job from `store` and resumes the unfinished ones (their
  // unfinished trials go back to be built). `metrics` may be null.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(Store* store, TrackerMetricsInterface* metrics,
                                                           SchedulerOptions options,
                                                           SchedulerClock clock = SchedulerClock::Real());
  ~Scheduler();

  // ---- job API (JobService)
  // InvalidArgument naming the problem: unknown workload or template,
  // malformed args, unsupported target, n_trial out of range, ...
  absl::StatusOr<proto::JobStatus> SubmitJob(const proto::JobSpec& spec);
  absl::StatusOr<proto::JobStatus> GetJob(const std::string& job_id);
  absl::StatusOr<proto::JobStatus> CancelJob(const std::string& job_id);
  std::vector<proto::JobStatus> ListJobs(bool include_finished);
  absl::StatusOr<proto::BestConfigResponse> BestConfig(const proto::BestConfigRequest& request);
  absl::StatusOr<std::vector<std::string>> ExportRecords(const std::string& job_id);
  proto::ListDevicesResponse ListDevices();
  proto::QueueSummaryResponse QueueSummary();
  // Subscribes `watcher` to the job's events; it first receives one event
  // with the current status (trial_id -1). Returns a subscription id.
  absl::StatusOr<int64_t> WatchJob(const std::string& job_id, JobWatcher watcher);
  void Unwatch(int64_t subscription);

  // ---- worker streams (WorkerGateway)
  // InvalidArgument for a malformed registration; AlreadyExists when a live
  // worker has this name (the old session is closed first if it has gone
  // silent, so a restarted worker is not locked out).
  absl::StatusOr<std::string> RegisterWorker(const proto::Register& registration,
                                             const std::string& peer, std::shared_ptr<Outbox> outbox);
  // Every message after Register. Problems (a result for a lease the worker
  // does not hold, a proposal for a job it does not run, a config outside
  // the space) are answered with an Error message on the stream; they never
  // disturb other work.
  void OnMessage(const std::string& worker_id, const proto::WorkerMessage& message);
  // The stream ended: requeue the worker's work, release its jobs.
  void OnDisconnect(const std::string& worker_id, const absl::Status& why);

  // Expires leases and silent workers; refreshes gauges. Call periodically
  // (the server does, every 100 ms).
  void Tick();

  const SchedulerOptions& options() const { return options_; }

 private:
  enum class TrialState { kToBuild, kBuilding, kToMeasure, kMeasuring, kDone };
  enum class Stage { kBuild, kMeasure };

  struct Trial {
    int64_t id = 0;
    std::string config_json;
    int64_t config_index = 0;
    TrialState state = TrialState::kToBuild;
    int32_t attempts = 0;
    std::string lease_id;        // while building or measuring
    double queued_at = 0;        // steady time it entered its current queue
    // Between build and measure.
    std::shared_ptr<const std::string> shared_object;
    std::string entry_name;
    std::string artifact_hash;
    double build_seconds = 0;
    std::string builder;
    bool done = false;
    proto::TrialResult result;
  };

  struct Job {
    StoredJob stored;
    std::unique_ptr<Task> task;  // for configs, records and FLOPs
    std::map<int64_t, Trial> trials;
    std::deque<int64_t> to_build;
    std::deque<int64_t> to_measure;
    int64_t building = 0;
    int64_t measuring = 0;
    int64_t done = 0;
    int64_t failed = 0;
    std::string tuner_worker;    // worker id of the tuner holding it
    double build_pass = 0;       // stride scheduling
    double measure_pass = 0;
    double best_cost = 0;        // 0 = none yet
    std::string best_config_json;
    bool search_finished = false;
    std::string finish_reason;
    std::map<int64_t, JobWatcher> watchers;

    bool finished() const { return IsFinalJobState(stored.state); }
    int64_t in_flight() const { return static_cast<int64_t>(trials.size()) - done; }
    double stride() const { return 1.0 / std::max(1, stored.spec.priority()); }
  };

  struct Lease {
    std::string job_id;
    int64_t trial_id = 0;
    std::string worker_id;
    Stage stage = Stage::kBuild;
    double deadline = 0;
    std::string host;            // of the worker, for measurement isolation
    bool isolating = false;      // counted in host_builds_/host_measures_
  };

  struct Worker {
    std::string id;
    proto::Register registration;
    std::string peer;
    std::shared_ptr<Outbox> outbox;
    std::set<std::string> leases;
    std::set<std::string> jobs;  // tuners: jobs held
    absl::flat_hash_set<std::string> artifacts_sent;  // agents: hashes sent
    double connected_at = 0;     // wall
    double last_seen = 0;        // steady
    int64_t completed = 0;
    bool free_listed = false;    // agents: in free_agents_ of its key
    std::string host;            // peer address without the port
    bool isolating = false;      // takes part in measurement isolation
    proto::WorkerRole role() const { return registration.role(); }
  };

  Scheduler(Store* store, TrackerMetricsInterface* metrics, SchedulerOptions options, SchedulerClock clock);

  absl::Status Load() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Messages from workers.
  void HandleBuildResult(Worker& worker, const proto::BuildResult& result, double received_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleMeasureResult(Worker& worker, const proto::MeasureResult& result, double received_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandlePropose(Worker& worker, const proto::ProposeTrials& propose, double received_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendError(Worker& worker, const absl::Status& status, bool fatal)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Dispatch of queued work to free workers; `since` is the steady time of
  // the event that made it possible (for the dispatch latency).
  void DispatchBuilds(double since) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchMeasures(const std::string& device_key, double since) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendMeasure(Worker& agent, Job& job, Trial& trial, bool with_bytes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchAllMeasures(double since) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Measurement isolation (SchedulerOptions::isolate_measurements).
  bool HostMayBuild(const std::string& host) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HostMayMeasure(const std::string& host) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AssignJobs() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SendAssignment(Worker& tuner, Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MarkAgentFree(Worker& agent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RecordDispatch(Stage stage, double since) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Trial and job transitions.
  Lease* FindLease(Worker& worker, const std::string& lease_id, Stage stage)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndLease(const std::string& lease_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinishTrial(Job& job, Trial& trial, proto::TrialResult result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RequeueLease(const std::string& lease_id, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeFinishJob(Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndJob(Job& job, proto::JobState state, const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropWorker(const std::string& worker_id, const absl::Status& why, bool close_stream)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PersistJob(const Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PersistTrial(const Job& job, const Trial& trial, const std::string& record_line)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  proto::JobStatus StatusOf(const Job& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Notify(Job& job, const proto::JobEvent& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int32_t SuggestedWindow(const Job& job) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int AgentsOfKey(const std::string& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefreshGauges() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string NewLeaseId() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Store* const store_;
  TrackerMetricsInterface* const metrics_;
  const SchedulerOptions options_;
  const SchedulerClock clock_;

  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> job_order_ ABSL_GUARDED_BY(mu_);  // submission order
  int64_t next_job_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<std::string, std::unique_ptr<Worker>> workers_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> worker_by_name_ ABSL_GUARDED_BY(mu_);
  int64_t next_worker_ ABSL_GUARDED_BY(mu_) = 1;
  absl::flat_hash_map<std::string, Lease> leases_ ABSL_GUARDED_BY(mu_);
  int64_t next_lease_ ABSL_GUARDED_BY(mu_) = 1;
  // Free agents per device key, in the order they became free.
  std::map<std::string, std::deque<std::string>> free_agents_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> builders_ ABSL_GUARDED_BY(mu_);
  // Leases in flight per host, of isolating workers.
  std::map<std::string, int> host_builds_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> host_measures_ ABSL_GUARDED_BY(mu_);
  // Isolating agents per host.
  std::map<std::string, std::set<std::string>> host_agents_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> tuners_ ABSL_GUARDED_BY(mu_);
  double virtual_build_pass_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, double> virtual_measure_pass_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, std::string> watch_jobs_ ABSL_GUARDED_BY(mu_);  // subscription -> job
  int64_t next_watch_ ABSL_GUARDED_BY(mu_) = 1;
  // Recent dispatch latencies (seconds), a ring.
  std::vector<double> dispatch_ring_ ABSL_GUARDED_BY(mu_);
  size_t dispatch_next_ ABSL_GUARDED_BY(mu_) = 0;
  double last_gauge_refresh_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_SCHEDULER_H_
