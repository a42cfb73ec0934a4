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
  void SetWorkers(const std::vector<WorkerCount>& workers) override { Replace(workers_, workers); }
  void SetQueues(const std::vector<QueueStat>& queues) override { Replace(queues_, queues); }
  void SetJobs(const JobStats& jobs) override { Replace(jobs_, jobs); }
  void TrialFinished(int error_no) override { Bump(trials_finished_, error_no); }
  void Requeued(RequeueReason reason) override { Bump(requeues_, reason); }
  void ObserveBuild(double seconds) override { Append(build_seconds_, seconds); }
  void ObserveMeasure(absl::string_view device_key, double seconds) override {
    Append(measure_seconds_, std::make_pair(std::string(device_key), seconds));
  }
  void ObserveDispatch(QueueStage stage, double seconds) override {
    Append(dispatch_seconds_, std::make_pair(stage, seconds));
  }
  void MessageIn(WorkerRole role) override { Bump(messages_in_, role); }
  void MessageOut(WorkerRole role) override { Bump(messages_out_, role); }
  void Rejected(absl::string_view reason) override { Bump(rejected_, std::string(reason)); }
  void ResultAdopted(bool build) override { Bump(adopted_, build); }
  void SetCalibrations(const std::vector<KeyCalibration>& keys) override {
    Replace(calibrations_, keys);
  }
  void SetUsers(const std::vector<UserUsage>& users) override { Replace(users_, users); }
  void AgentCalibrated(absl::string_view device_key, bool quarantined) override {
    Bump(calibrated_, std::make_pair(std::string(device_key), quarantined));
  }

  std::vector<WorkerCount> workers() const { return Read(workers_); }
  std::vector<UserUsage> users() const { return Read(users_); }
  std::vector<QueueStat> queues() const { return Read(queues_); }
  JobStats jobs() const { return Read(jobs_); }
  int trials_finished(int error_no) const { return Count(trials_finished_, error_no); }
  int requeues(RequeueReason reason) const { return Count(requeues_, reason); }
  std::vector<double> build_seconds() const { return Read(build_seconds_); }
  std::vector<std::pair<std::string, double>> measure_seconds() const {
    return Read(measure_seconds_);
  }
  std::vector<std::pair<QueueStage, double>> dispatch_seconds() const {
    return Read(dispatch_seconds_);
  }
  int messages_in(WorkerRole role) const { return Count(messages_in_, role); }
  int messages_out(WorkerRole role) const { return Count(messages_out_, role); }
  int rejected(const std::string& reason) const { return Count(rejected_, reason); }
  int adopted(bool build) const { return Count(adopted_, build); }
  std::vector<KeyCalibration> calibrations() const { return Read(calibrations_); }
  int calibrated(const std::string& device_key, bool quarantined) const {
    return Count(calibrated_, std::make_pair(device_key, quarantined));
  }

 private:
  // Each helper takes the lock around one access to one recorded field.
  template <typename T>
  void Replace(T& field, const T& value) {
    absl::MutexLock lock(&mutex_);
    field = value;
  }
  template <typename Map, typename Key>
  void Bump(Map& counts, const Key& key) {
    absl::MutexLock lock(&mutex_);
    ++counts[key];
  }
  template <typename Vector, typename Value>
  void Append(Vector& values, Value value) {
    absl::MutexLock lock(&mutex_);
    values.push_back(std::move(value));
  }
  template <typename T>
  T Read(const T& field) const {
    absl::MutexLock lock(&mutex_);
    return field;
  }
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
  std::map<bool, int> adopted_ ABSL_GUARDED_BY(mutex_);
  std::vector<KeyCalibration> calibrations_ ABSL_GUARDED_BY(mutex_);
  std::vector<UserUsage> users_ ABSL_GUARDED_BY(mutex_);
  std::map<std::pair<std::string, bool>, int> calibrated_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_FAKE_METRICS_H_
