// FailingStore: a MemoryStore whose writes fail while a test says so, for
// tests of what the tracker does when the store refuses a write (it must
// acknowledge nothing that was not stored).
//
//   FailingStore store;
//   store.FailWrites(absl::UnavailableError("disk full"));
//   ... every PutJob / PutTrials now returns that error and writes nothing
//   store.FailWrites(absl::OkStatus());  // healthy again
#ifndef TUNEFLEET_TRACKER_STORE_FAILING_STORE_H_
#define TUNEFLEET_TRACKER_STORE_FAILING_STORE_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tracker/store/memory_store.h"
#include "tracker/store/store.h"

namespace tunefleet {

class FailingStore final : public Store {
 public:
  // From now on every write returns `error` (OK: writes work again).
  void FailWrites(absl::Status error) {
    absl::MutexLock lock(&mu_);
    error_ = std::move(error);
  }
  // Writes refused so far.
  int refused() const {
    absl::MutexLock lock(&mu_);
    return refused_;
  }

  [[nodiscard]] absl::Status PutJob(const StoredJob& job) override {
    if (absl::Status refused = Refuse(); !refused.ok()) return refused;
    return memory_.PutJob(job);
  }
  [[nodiscard]] absl::Status PutTrials(const std::vector<StoredTrial>& trials) override {
    if (absl::Status refused = Refuse(); !refused.ok()) return refused;
    return memory_.PutTrials(trials);
  }
  [[nodiscard]] absl::StatusOr<std::vector<StoredJob>> LoadJobs() override {
    return memory_.LoadJobs();
  }
  [[nodiscard]] absl::StatusOr<std::vector<StoredTrial>> LoadTrials(
      const std::string& job_id) override {
    return memory_.LoadTrials(job_id);
  }
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> LoadRecordLines(
      const std::string& job_id) override {
    return memory_.LoadRecordLines(job_id);
  }
  [[nodiscard]] absl::StatusOr<std::string> LeaseKey() override { return memory_.LeaseKey(); }

 private:
  [[nodiscard]] absl::Status Refuse() {
    absl::MutexLock lock(&mu_);
    if (!error_.ok()) ++refused_;
    return error_;
  }

  MemoryStore memory_;
  mutable absl::Mutex mu_;
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  int refused_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_FAILING_STORE_H_
