#include "tracker/metrics.h"

#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "prometheus/text_serializer.h"

namespace tunefleet {
namespace {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;

// AutoTVM's MeasureErrorNo names in label form, indexed by number.
constexpr std::array<const char*, kNumTrialResults> kTrialResultLabels = {
    "no_error",     "instantiation_error", "compile_host", "compile_device", "runtime_device",
    "wrong_answer", "build_timeout",       "run_timeout",  "unknown",
};
constexpr int kUnknownResult = kNumTrialResults - 1;

// Builds with LLVM take tens of milliseconds to minutes.
Histogram::BucketBoundaries BuildBuckets() {
  return {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
}

// A measurement is number x repeat runs plus cooldowns: milliseconds to
// the per-trial timeout.
Histogram::BucketBoundaries MeasureBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
}

// Queueing plus scheduling: 50 microseconds on an idle fleet to a second when
// the queue is long.
Histogram::BucketBoundaries DispatchBuckets() {
  return {50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3,
          10e-3, 25e-3,  50e-3,  0.1,    0.25, 0.5,    1};
}

std::string ToString(absl::string_view view) { return std::string(view.data(), view.size()); }

// A metric family named `name` with `help`, registered in `registry`.
template <typename Builder>
auto& Register(Builder builder, const char* name, const char* help,
               prometheus::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

}  // namespace

TrackerMetrics::TrackerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& registry = *registry_;

  workers_family_ = &Register(
      prometheus::BuildGauge(), "tunefleet_workers",
      "Connected workers by role, device key and state (free, busy or quarantined).", registry);
  queue_depth_family_ = &Register(
      prometheus::BuildGauge(), "tunefleet_queue_depth",
      "Trials waiting in a queue: the build queue, or a device key's measure queue.", registry);
  queue_age_family_ =
      &Register(prometheus::BuildGauge(), "tunefleet_queue_oldest_age_seconds",
                "Age of the oldest trial waiting in a queue (0 when empty).", registry);

  auto& trials =
      Register(prometheus::BuildCounter(), "tunefleet_trials_total",
               "Trials finished, by result (AutoTVM MeasureErrorNo, lower case).", registry);
  for (int i = 0; i < kNumTrialResults; ++i) {
    trials_by_result_[i] = &trials.Add({{"result", kTrialResultLabels[i]}});
  }

  auto& requeues = Register(prometheus::BuildCounter(), "tunefleet_trial_requeues_total",
                            "Trials put back in their queue, by reason.", registry);
  for (int i = 0; i < kNumRequeueReasons; ++i) {
    requeues_by_reason_[i] =
        &requeues.Add({{"reason", ToString(LabelValue(static_cast<RequeueReason>(i)))}});
  }

  build_duration_ = &Register(prometheus::BuildHistogram(), "tunefleet_build_duration_seconds",
                              "Time a builder spent on one build.", registry)
                         .Add({}, BuildBuckets());
  measure_family_ = &Register(prometheus::BuildHistogram(), "tunefleet_measure_duration_seconds",
                              "Time an agent spent measuring one trial, by device key.", registry);
  auto& dispatch =
      Register(prometheus::BuildHistogram(), "tunefleet_dispatch_latency_seconds",
               "From a trial entering a queue to its dispatch to a worker, by stage.", registry);
  for (int i = 0; i < kNumQueueStages; ++i) {
    dispatch_by_stage_[i] = &dispatch.Add(
        {{"stage", ToString(LabelValue(static_cast<QueueStage>(i)))}}, DispatchBuckets());
  }

  auto& jobs = Register(prometheus::BuildGauge(), "tunefleet_jobs",
                        "Jobs known to the tracker, by state and priority class.", registry);
  auto& job_trials = Register(prometheus::BuildGauge(), "tunefleet_job_trials",
                              "Trials of unfinished jobs by priority class: done, and the "
                              "target (sum of n_trial).",
                              registry);
  for (int i = 0; i < kNumPriorityClasses; ++i) {
    const std::string priority_class = ToString(LabelValue(static_cast<PriorityClass>(i)));
    auto add = [&priority_class](prometheus::Family<Gauge>& family, const char* state) {
      return &family.Add({{"state", state}, {"priority_class", priority_class}});
    };
    JobGauges& gauges = jobs_by_priority_[i];
    gauges.queued = add(jobs, "queued");
    gauges.running = add(jobs, "running");
    gauges.succeeded = add(jobs, "succeeded");
    gauges.failed = add(jobs, "failed");
    gauges.cancelled = add(jobs, "cancelled");
    gauges.trials_done = add(job_trials, "done");
    gauges.trials_target = add(job_trials, "target");
  }
  auto& model_jobs =
      Register(prometheus::BuildGauge(), "tunefleet_model_jobs",
               "Model jobs (several tasks) known to the tracker, by state.", registry);
  model_jobs_queued_ = &model_jobs.Add({{"state", "queued"}});
  model_jobs_running_ = &model_jobs.Add({{"state", "running"}});
  model_jobs_finished_ = &model_jobs.Add({{"state", "finished"}});
  auto& model_tasks = Register(
      prometheus::BuildGauge(), "tunefleet_model_job_tasks",
      "Tasks of running model jobs, with (tuned) and without (untuned) a result.", registry);
  model_tasks_tuned_ = &model_tasks.Add({{"state", "tuned"}});
  model_tasks_untuned_ = &model_tasks.Add({{"state", "untuned"}});
  best_gflops_family_ =
      &Register(prometheus::BuildGauge(), "tunefleet_job_best_gflops",
                "Best GFLOPS reached among running and finished jobs, by target.", registry);

  auto& messages =
      Register(prometheus::BuildCounter(), "tunefleet_stream_messages_total",
               "Messages on workers' Connect streams, by role and direction.", registry);
  for (int i = 0; i < kNumWorkerRoles; ++i) {
    const std::string role = ToString(LabelValue(static_cast<WorkerRole>(i)));
    messages_in_by_role_[i] = &messages.Add({{"role", role}, {"direction", "in"}});
    messages_out_by_role_[i] = &messages.Add({{"role", role}, {"direction", "out"}});
  }
  rejected_family_ = &Register(prometheus::BuildCounter(), "tunefleet_rejected_messages_total",
                               "Messages and calls refused, by reason.", registry);
  auto& adopted = Register(prometheus::BuildCounter(), "tunefleet_results_adopted_total",
                           "Results of leases an earlier tracker on the store gave, taken after "
                           "a takeover or restart, by stage.",
                           registry);
  adopted_builds_ = &adopted.Add({{"stage", "build"}});
  adopted_measures_ = &adopted.Add({{"stage", "measure"}});
  user_jobs_family_ =
      &Register(prometheus::BuildGauge(), "tunefleet_user_jobs_in_flight",
                "A user's jobs queued or running (its jobs= quota caps it).", registry);
  user_trials_family_ =
      &Register(prometheus::BuildGauge(), "tunefleet_user_trials_last_hour",
                "Builds dispatched for a user's jobs in the trailing hour (its trials_per_hour= "
                "quota caps it).",
                registry);
  user_measuring_family_ = &Register(
      prometheus::BuildGauge(), "tunefleet_user_measuring",
      "A user's trials being measured now (its agent_share= quota caps it per key).", registry);
  user_held_family_ =
      &Register(prometheus::BuildGauge(), "tunefleet_user_quota_held",
                "1 while a user's queued work waits on one of its quotas.", registry);
  calibration_gflops_family_ = &Register(
      prometheus::BuildGauge(), "tunefleet_agent_calibration_gflops",
      "Latest calibration throughput of a device key's agents: the slowest (stat=min) and the "
      "fastest (stat=max).",
      registry);
  calibration_noise_family_ =
      &Register(prometheus::BuildGauge(), "tunefleet_agent_calibration_noise_ratio",
                "Largest relative spread (robust: 1.4826 x MAD / median) among a device key's "
                "agents' latest calibrations.",
                registry);
  calibrations_family_ = &Register(
      prometheus::BuildCounter(), "tunefleet_agent_calibrations_total",
      "Agent calibrations received, by device key and result (passed or quarantined).", registry);
}

std::string TrackerMetrics::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void TrackerMetrics::SetWorkers(const std::vector<WorkerCount>& workers) {
  // Totals first (several entries for one (role, key) add up), then one Set
  // per series, so a scrape never sees a half-applied snapshot's zeros.
  absl::flat_hash_map<WorkerKey, std::array<int64_t, 3>> totals;  // free, busy, quarantined
  for (const WorkerCount& count : workers) {
    auto& [free, busy, quarantined] = totals[WorkerKey(count.role, count.device_key)];
    free += count.free;
    busy += count.busy;
    quarantined += count.quarantined;
  }
  absl::MutexLock lock(&mutex_);
  for (auto& [key, gauges] : workers_) {
    if (totals.contains(key)) continue;
    gauges.free->Set(0);
    gauges.busy->Set(0);
    gauges.quarantined->Set(0);
  }
  for (const auto& [key, total] : totals) {
    StateGauges& gauges = workers_[key];
    if (gauges.free == nullptr) {
      const std::string role = ToString(LabelValue(std::get<0>(key)));
      const std::string& device_key = std::get<1>(key);
      gauges.free =
          &workers_family_->Add({{"role", role}, {"device_key", device_key}, {"state", "free"}});
      gauges.busy =
          &workers_family_->Add({{"role", role}, {"device_key", device_key}, {"state", "busy"}});
      gauges.quarantined = &workers_family_->Add(
          {{"role", role}, {"device_key", device_key}, {"state", "quarantined"}});
    }
    gauges.free->Set(static_cast<double>(total[0]));
    gauges.busy->Set(static_cast<double>(total[1]));
    gauges.quarantined->Set(static_cast<double>(total[2]));
  }
}

void TrackerMetrics::SetCalibrations(const std::vector<KeyCalibration>& keys) {
  absl::MutexLock lock(&mutex_);
  absl::flat_hash_map<std::string, const KeyCalibration*> latest;
  for (const KeyCalibration& key : keys) latest[key.device_key] = &key;
  for (auto& [key, gauges] : calibration_by_key_) {
    if (latest.contains(key)) continue;
    gauges.gflops_min->Set(0);
    gauges.gflops_max->Set(0);
    gauges.noise_max->Set(0);
  }
  for (const auto& [key, figures] : latest) {
    CalibrationGauges& gauges = calibration_by_key_[key];
    if (gauges.gflops_min == nullptr) {
      gauges.gflops_min = &calibration_gflops_family_->Add({{"device_key", key}, {"stat", "min"}});
      gauges.gflops_max = &calibration_gflops_family_->Add({{"device_key", key}, {"stat", "max"}});
      gauges.noise_max = &calibration_noise_family_->Add({{"device_key", key}, {"stat", "max"}});
    }
    gauges.gflops_min->Set(figures->gflops_min);
    gauges.gflops_max->Set(figures->gflops_max);
    gauges.noise_max->Set(figures->noise_max);
  }
}

void TrackerMetrics::SetUsers(const std::vector<UserUsage>& users) {
  absl::MutexLock lock(&mutex_);
  absl::flat_hash_map<std::string, const UserUsage*> now;
  for (const UserUsage& user : users) now[user.user] = &user;
  for (auto& [user, gauges] : user_gauges_) {
    if (now.contains(user)) continue;
    gauges.jobs->Set(0);
    gauges.trials_last_hour->Set(0);
    gauges.measuring->Set(0);
    gauges.held->Set(0);
  }
  for (const auto& [user, usage] : now) {
    UserGauges& gauges = user_gauges_[user];
    if (gauges.jobs == nullptr) {
      const std::map<std::string, std::string> labels = {{"user", user}};
      gauges.jobs = &user_jobs_family_->Add(labels);
      gauges.trials_last_hour = &user_trials_family_->Add(labels);
      gauges.measuring = &user_measuring_family_->Add(labels);
      gauges.held = &user_held_family_->Add(labels);
    }
    gauges.jobs->Set(static_cast<double>(usage->jobs_in_flight));
    gauges.trials_last_hour->Set(static_cast<double>(usage->trials_last_hour));
    gauges.measuring->Set(static_cast<double>(usage->measuring));
    gauges.held->Set(usage->held.empty() ? 0 : 1);
  }
}

void TrackerMetrics::AgentCalibrated(absl::string_view device_key, bool quarantined) {
  absl::MutexLock lock(&mutex_);
  prometheus::Counter*& counter = calibrations_[{ToString(device_key), quarantined}];
  if (counter == nullptr) {
    counter = &calibrations_family_->Add(
        {{"device_key", ToString(device_key)}, {"result", quarantined ? "quarantined" : "passed"}});
  }
  counter->Increment();
}

void TrackerMetrics::SetQueues(const std::vector<QueueStat>& queues) {
  absl::flat_hash_map<QueueKey, const QueueStat*> latest;  // the last entry for a queue wins
  for (const QueueStat& queue : queues) latest[QueueKey(queue.stage, queue.device_key)] = &queue;
  absl::MutexLock lock(&mutex_);
  for (auto& [key, gauges] : queues_) {
    if (latest.contains(key)) continue;
    gauges.depth->Set(0);
    gauges.oldest_age->Set(0);
  }
  for (const auto& [key, queue] : latest) {
    QueueGauges& gauges = queues_[key];
    if (gauges.depth == nullptr) {
      const prometheus::Labels labels = {{"stage", ToString(LabelValue(queue->stage))},
                                         {"device_key", queue->device_key}};
      gauges.depth = &queue_depth_family_->Add(labels);
      gauges.oldest_age = &queue_age_family_->Add(labels);
    }
    gauges.depth->Set(static_cast<double>(queue->depth));
    gauges.oldest_age->Set(queue->oldest_age_seconds);
  }
}

void TrackerMetrics::SetJobs(const JobStats& jobs) {
  for (int i = 0; i < kNumPriorityClasses; ++i) {
    const JobCounts& counts = jobs.by_priority[i];
    const JobGauges& gauges = jobs_by_priority_[i];
    gauges.queued->Set(static_cast<double>(counts.queued));
    gauges.running->Set(static_cast<double>(counts.running));
    gauges.succeeded->Set(static_cast<double>(counts.succeeded));
    gauges.failed->Set(static_cast<double>(counts.failed));
    gauges.cancelled->Set(static_cast<double>(counts.cancelled));
    gauges.trials_done->Set(static_cast<double>(counts.trials_done));
    gauges.trials_target->Set(static_cast<double>(counts.trials_target));
  }
  model_jobs_queued_->Set(static_cast<double>(jobs.model_jobs_queued));
  model_jobs_running_->Set(static_cast<double>(jobs.model_jobs_running));
  model_jobs_finished_->Set(static_cast<double>(jobs.model_jobs_finished));
  model_tasks_tuned_->Set(static_cast<double>(jobs.model_tasks_tuned));
  model_tasks_untuned_->Set(static_cast<double>(jobs.model_tasks_untuned));

  absl::MutexLock lock(&mutex_);
  absl::flat_hash_set<std::string> present;
  for (const TargetBest& best : jobs.best_gflops) {
    present.insert(best.target);
    prometheus::Gauge*& gauge = best_gflops_by_target_[best.target];
    if (gauge == nullptr) gauge = &best_gflops_family_->Add({{"target", best.target}});
    gauge->Set(best.gflops);
  }
  // A best of 0 GFLOPS would be a lie: drop targets no longer reported.
  for (auto it = best_gflops_by_target_.begin(); it != best_gflops_by_target_.end();) {
    if (present.contains(it->first)) {
      ++it;
      continue;
    }
    best_gflops_family_->Remove(it->second);
    best_gflops_by_target_.erase(it++);
  }
}

void TrackerMetrics::TrialFinished(int error_no) {
  const int index = error_no >= 0 && error_no < kNumTrialResults ? error_no : kUnknownResult;
  trials_by_result_[index]->Increment();
}

void TrackerMetrics::Requeued(RequeueReason reason) {
  requeues_by_reason_[static_cast<int>(reason)]->Increment();
}

void TrackerMetrics::ObserveBuild(double seconds) { build_duration_->Observe(seconds); }

void TrackerMetrics::ObserveMeasure(absl::string_view device_key, double seconds) {
  prometheus::Histogram* histogram = nullptr;
  {
    absl::ReaderMutexLock lock(&mutex_);
    auto it = measure_by_key_.find(device_key);
    if (it != measure_by_key_.end()) histogram = it->second;
  }
  if (histogram == nullptr) {
    absl::MutexLock lock(&mutex_);
    prometheus::Histogram*& slot = measure_by_key_[device_key];
    if (slot == nullptr)
      slot = &measure_family_->Add({{"device_key", ToString(device_key)}}, MeasureBuckets());
    histogram = slot;
  }
  histogram->Observe(seconds);
}

void TrackerMetrics::ObserveDispatch(QueueStage stage, double seconds) {
  dispatch_by_stage_[static_cast<int>(stage)]->Observe(seconds);
}

void TrackerMetrics::MessageIn(WorkerRole role) {
  messages_in_by_role_[static_cast<int>(role)]->Increment();
}

void TrackerMetrics::MessageOut(WorkerRole role) {
  messages_out_by_role_[static_cast<int>(role)]->Increment();
}

void TrackerMetrics::ResultAdopted(bool build) {
  (build ? adopted_builds_ : adopted_measures_)->Increment();
}

void TrackerMetrics::Rejected(absl::string_view reason) {
  prometheus::Counter* counter = nullptr;
  {
    absl::ReaderMutexLock lock(&mutex_);
    auto it = rejected_by_reason_.find(reason);
    if (it != rejected_by_reason_.end()) counter = it->second;
  }
  if (counter == nullptr) {
    absl::MutexLock lock(&mutex_);
    prometheus::Counter*& slot = rejected_by_reason_[reason];
    if (slot == nullptr) slot = &rejected_family_->Add({{"reason", ToString(reason)}});
    counter = slot;
  }
  counter->Increment();
}

}  // namespace tunefleet
