// FakeTrackerMetrics: records every TrackerMetricsInterface call so scheduler
// and service tests can check what was reported, with no prometheus-cpp.
//
//   FakeTrackerMetrics metrics;
//   ... run the scheduler ...
//   EXPECT_EQ(metrics.trials_finished(0), 3);
#ifndef TUNEFLEET_TRACKER_FAKE_METRICS_H_
#define TUNEFLEET_TRACKER_FAKE_METRICS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "tracker/metrics_interface.h"

namespace tunefleet {

class FakeTrackerMetrics final : public TrackerMetricsInterface {
 public:
  void SetWorkers(const std::vector<WorkerCount>& workers) override {
    absl::MutexLock lock(&mutex_);
    workers_ = workers;
  }
  void SetQueues(const std::vector<QueueStat>& queues) override {
    absl::MutexLock lock(&mutex_);
    queues_ = queues;
  }
  void SetJobs(const JobStats& jobs) override {
    absl::MutexLock lock(&mutex_);
    jobs_ = jobs;
  }
  void TrialFinished(int error_no) override {
    absl::MutexLock lock(&mutex_);
    ++trials_finished_[error_no];
  }
  void Requeued(RequeueReason reason) override {
    absl::MutexLock lock(&mutex_);
    ++requeues_[reason];
  }
  void ObserveBuild(double seconds) override {
    absl::MutexLock lock(&mutex_);
    build_seconds_.push_back(seconds);
  }
  void ObserveMeasure(absl::string_view device_key, double seconds) override {
    absl::MutexLock lock(&mutex_);
    measure_seconds_.emplace_back(std::string(device_key), seconds);
  }
  void ObserveDispatch(QueueStage stage, double seconds) override {
    absl::MutexLock lock(&mutex_);
    dispatch_seconds_.emplace_back(stage, seconds);
  }
  void MessageIn(WorkerRole role) override {
    absl::MutexLock lock(&mutex_);
    ++messages_in_[role];
  }
  void MessageOut(WorkerRole role) override {
    absl::MutexLock lock(&mutex_);
    ++messages_out_[role];
  }
  void Rejected(absl::string_view reason) override {
    absl::MutexLock lock(&mutex_);
    ++rejected_[std::string(reason)];
  }

  std::vector<WorkerCount> workers() const { absl::MutexLock lock(&mutex_); return workers_; }
  std::vector<QueueStat> queues() const { absl::MutexLock lock(&mutex_); return queues_; }
  JobStats jobs() const { absl::MutexLock lock(&mutex_); return jobs_; }
  int trials_finished(int error_no) const { return Count(trials_finished_, error_no); }
  int requeues(RequeueReason reason) const { return Count(requeues_, reason); }
  std::vector<double> build_seconds() const { absl::MutexLock lock(&mutex_); return build_seconds_; }
  std::vector<std::pair<std::string, double>> measure_seconds() const {
    absl::MutexLock lock(&mutex_);
    return measure_seconds_;
  }
  std::vector<std::pair<QueueStage, double>> dispatch_seconds() const {
    absl::MutexLock lock(&mutex_);
    return dispatch_seconds_;
  }
  int messages_in(WorkerRole role) const { return Count(messages_in_, role); }
  int messages_out(WorkerRole role) const { return Count(messages_out_, role); }
  int rejected(const std::string& reason) const { return Count(rejected_, reason); }

 private:
  template <typename Map, typename Key>
  int Count(const Map& map, const Key& key) const {
    absl::MutexLock lock(&mutex_);
    auto it = map.find(key);
    return it == map.end() ? 0 : it->second;
  }

  mutable absl::Mutex mutex_;
  std::vector<WorkerCount> workers_ ABSL_GUARDED_BY(mutex_);
  std::vector<QueueStat> queues_ ABSL_GUARDED_BY(mutex_);
  JobStats jobs_ ABSL_GUARDED_BY(mutex_);
  std::map<int, int> trials_finished_ ABSL_GUARDED_BY(mutex_);
  std::map<RequeueReason, int> requeues_ ABSL_GUARDED_BY(mutex_);
  std::vector<double> build_seconds_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::pair<std::string, double>> measure_seconds_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::pair<QueueStage, double>> dispatch_seconds_ ABSL_GUARDED_BY(mutex_);
  std::map<WorkerRole, int> messages_in_ ABSL_GUARDED_BY(mutex_);
  std::map<WorkerRole, int> messages_out_ ABSL_GUARDED_BY(mutex_);
  std::map<std::string, int> rejected_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_FAKE_METRICS_H_
