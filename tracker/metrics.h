// TrackerMetrics: the tracker's TrackerMetricsInterface in Prometheus format
// (prometheus-cpp). Only the tracker's server wiring should include this;
// the scheduler and services take a TrackerMetricsInterface*. The HTTP
// endpoint, with the process metrics every daemon serves, is
// metrics/metrics_server.h.
//
//   auto metrics = std::make_unique<TrackerMetrics>();
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<MetricsServer> server,
//                       StartMetricsServer("127.0.0.1:9464", {metrics->registry()}));
//
// Families (all names start with tunefleet_; base units in names):
//   tunefleet_workers{role,device_key,state}            gauge (state free|busy)
//   tunefleet_queue_depth{stage,device_key}             gauge
//   tunefleet_queue_oldest_age_seconds{stage,device_key} gauge
//   tunefleet_trials_total{result}                      counter (no_error, ...)
//   tunefleet_trial_requeues_total{reason}              counter
//   tunefleet_build_duration_seconds                    histogram
//   tunefleet_measure_duration_seconds{device_key}      histogram
//   tunefleet_dispatch_latency_seconds{stage}           histogram (50us..1s)
//   tunefleet_jobs{state,priority_class}                gauge
//   tunefleet_job_trials{state,priority_class}          gauge (done|target, unfinished jobs)
//   tunefleet_job_best_gflops{target}                   gauge
//   tunefleet_stream_messages_total{role,direction}     counter (direction in|out)
//   tunefleet_rejected_messages_total{reason}           counter
//   tunefleet_results_adopted_total{stage}              counter (an earlier tracker's leases)
// priority_class is a job's priority in powers of two: 1, 2-3, 4-7, 8+.
// Series of the fixed label sets (results, reasons, stages, roles, job states
// and priority classes)
// exist from the start at 0, so rates and alerts never see a missing series.
#ifndef TUNEFLEET_TRACKER_METRICS_H_
#define TUNEFLEET_TRACKER_METRICS_H_

#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "tracker/metrics_interface.h"

namespace tunefleet {

// Number of AutoTVM MeasureErrorNo values (NO_ERROR = 0 .. UNKNOWN = 8).
inline constexpr int kNumTrialResults = 9;

class TrackerMetrics final : public TrackerMetricsInterface {
 public:
  TrackerMetrics();
  TrackerMetrics(const TrackerMetrics&) = delete;
  TrackerMetrics& operator=(const TrackerMetrics&) = delete;

  // The registry to serve (StartMetricsServer) or to add other families to.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }
  // The text exposition format of everything in the registry.
  std::string Serialize() const;

  void SetWorkers(const std::vector<WorkerCount>& workers) override;
  void SetQueues(const std::vector<QueueStat>& queues) override;
  void SetJobs(const JobStats& jobs) override;
  void TrialFinished(int error_no) override;
  void Requeued(RequeueReason reason) override;
  void ObserveBuild(double seconds) override;
  void ObserveMeasure(absl::string_view device_key, double seconds) override;
  void ObserveDispatch(QueueStage stage, double seconds) override;
  void MessageIn(WorkerRole role) override;
  void MessageOut(WorkerRole role) override;
  void Rejected(absl::string_view reason) override;
  void ResultAdopted(bool build) override;
  void SetCalibrations(const std::vector<KeyCalibration>& keys) override;
  void SetUsers(const std::vector<UserUsage>& users) override;
  void AgentCalibrated(absl::string_view device_key, bool quarantined) override;

 private:
  using WorkerKey = std::tuple<WorkerRole, std::string>;  // (role, device_key)
  using QueueKey = std::tuple<QueueStage, std::string>;   // (stage, device_key)
  struct StateGauges {
    prometheus::Gauge* free = nullptr;
    prometheus::Gauge* busy = nullptr;
    prometheus::Gauge* quarantined = nullptr;
  };
  struct CalibrationGauges {
    prometheus::Gauge* gflops_min = nullptr;
    prometheus::Gauge* gflops_max = nullptr;
    prometheus::Gauge* noise_max = nullptr;
  };
  struct QueueGauges {
    prometheus::Gauge* depth = nullptr;
    prometheus::Gauge* oldest_age = nullptr;
  };

  std::shared_ptr<prometheus::Registry> registry_;

  // Families whose label values are only known at run time.
  prometheus::Family<prometheus::Gauge>* workers_family_;
  prometheus::Family<prometheus::Gauge>* queue_depth_family_;
  prometheus::Family<prometheus::Gauge>* queue_age_family_;
  prometheus::Family<prometheus::Histogram>* measure_family_;
  prometheus::Family<prometheus::Gauge>* best_gflops_family_;
  prometheus::Family<prometheus::Counter>* rejected_family_;
  prometheus::Family<prometheus::Gauge>* calibration_gflops_family_;
  prometheus::Family<prometheus::Gauge>* calibration_noise_family_;
  prometheus::Family<prometheus::Counter>* calibrations_family_;

  // Series of fixed label sets, created once; indexed by the enum.
  std::array<prometheus::Counter*, kNumTrialResults> trials_by_result_;
  std::array<prometheus::Counter*, kNumRequeueReasons> requeues_by_reason_;
  prometheus::Histogram* build_duration_;
  std::array<prometheus::Histogram*, kNumQueueStages> dispatch_by_stage_;
  std::array<prometheus::Counter*, kNumWorkerRoles> messages_in_by_role_;
  std::array<prometheus::Counter*, kNumWorkerRoles> messages_out_by_role_;
  prometheus::Counter* adopted_builds_;
  prometheus::Counter* adopted_measures_;
  // The series of one priority class, mirroring JobCounts.
  struct JobGauges {
    prometheus::Gauge* queued = nullptr;
    prometheus::Gauge* running = nullptr;
    prometheus::Gauge* succeeded = nullptr;
    prometheus::Gauge* failed = nullptr;
    prometheus::Gauge* cancelled = nullptr;
    prometheus::Gauge* trials_done = nullptr;
    prometheus::Gauge* trials_target = nullptr;
  };
  std::array<JobGauges, kNumPriorityClasses> jobs_by_priority_;
  prometheus::Gauge* model_jobs_queued_;
  prometheus::Gauge* model_jobs_running_;
  prometheus::Gauge* model_jobs_finished_;
  prometheus::Gauge* model_tasks_tuned_;
  prometheus::Gauge* model_tasks_untuned_;

  // Series created on first use; the metric objects themselves are
  // thread-safe, the maps are not.
  mutable absl::Mutex mutex_;
  absl::flat_hash_map<WorkerKey, StateGauges> workers_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<QueueKey, QueueGauges> queues_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, prometheus::Histogram*> measure_by_key_ ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, prometheus::Gauge*> best_gflops_by_target_
      ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, prometheus::Counter*> rejected_by_reason_
      ABSL_GUARDED_BY(mutex_);
  absl::flat_hash_map<std::string, CalibrationGauges> calibration_by_key_ ABSL_GUARDED_BY(mutex_);
  struct UserGauges {
    prometheus::Gauge* jobs = nullptr;
    prometheus::Gauge* trials_last_hour = nullptr;
    prometheus::Gauge* measuring = nullptr;
    prometheus::Gauge* held = nullptr;
  };
  prometheus::Family<prometheus::Gauge>* user_jobs_family_;
  prometheus::Family<prometheus::Gauge>* user_trials_family_;
  prometheus::Family<prometheus::Gauge>* user_measuring_family_;
  prometheus::Family<prometheus::Gauge>* user_held_family_;
  absl::flat_hash_map<std::string, UserGauges> user_gauges_ ABSL_GUARDED_BY(mutex_);
  // (device_key, quarantined) -> tunefleet_agent_calibrations_total series.
  absl::flat_hash_map<std::pair<std::string, bool>, prometheus::Counter*> calibrations_
      ABSL_GUARDED_BY(mutex_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_METRICS_H_
