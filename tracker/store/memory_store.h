// MemoryStore: a Store that keeps everything in process memory, for tests and
// for throwaway local runs. Same contract as the SQLite store (ordering,
// atomic PutTrials, NotFound for a trial of an unknown job), nothing survives
// the process.
//
//   auto store = std::make_unique<MemoryStore>();
#ifndef TUNEFLEET_TRACKER_STORE_MEMORY_STORE_H_
#define TUNEFLEET_TRACKER_STORE_MEMORY_STORE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tracker/store/store.h"

namespace tunefleet {

class MemoryStore final : public Store {
 public:
  MemoryStore() = default;
  MemoryStore(const MemoryStore&) = delete;
  MemoryStore& operator=(const MemoryStore&) = delete;

  [[nodiscard]] absl::Status PutJob(const StoredJob& job) override;
  [[nodiscard]] absl::Status PutTrials(const std::vector<StoredTrial>& trials) override;
  [[nodiscard]] absl::StatusOr<std::vector<StoredJob>> LoadJobs() override;
  [[nodiscard]] absl::StatusOr<std::vector<StoredTrial>> LoadTrials(
      const std::string& job_id) override;
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> LoadRecordLines(
      const std::string& job_id) override;
  [[nodiscard]] absl::StatusOr<std::string> LeaseKey() override;

 private:
  struct JobEntry {
    StoredJob job;
    std::map<int64_t, StoredTrial> trials;  // by trial_id
  };

  // Jobs in the store's order: (sequence, job_id).
  std::vector<const JobEntry*> OrderedJobs() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  mutable absl::Mutex mutex_;
  std::map<std::string, JobEntry> jobs_ ABSL_GUARDED_BY(mutex_);  // by job_id
  std::string lease_key_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_MEMORY_STORE_H_
