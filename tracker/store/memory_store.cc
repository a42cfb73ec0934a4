#include "tracker/store/memory_store.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace tunefleet {

absl::Status MemoryStore::PutJob(const StoredJob& job) {
  if (job.job_id.empty()) return absl::InvalidArgumentError("PutJob: empty job_id");
  absl::MutexLock lock(&mutex_);
  jobs_[job.job_id].job = job;
  return absl::OkStatus();
}

absl::Status MemoryStore::PutTrials(const std::vector<StoredTrial>& trials) {
  absl::MutexLock lock(&mutex_);
  // Check the whole batch first so a failure writes nothing.
  for (const StoredTrial& trial : trials) {
    if (jobs_.find(trial.job_id) == jobs_.end()) {
      return absl::NotFoundError(absl::StrCat("PutTrials: trial ", trial.trial_id, " of job '",
                                              trial.job_id,
                                              "': the job was never put; nothing written"));
    }
  }
  for (const StoredTrial& trial : trials) jobs_[trial.job_id].trials[trial.trial_id] = trial;
  return absl::OkStatus();
}

std::vector<const MemoryStore::JobEntry*> MemoryStore::OrderedJobs() const {
  std::vector<const JobEntry*> ordered;
  ordered.reserve(jobs_.size());
  for (const auto& [job_id, entry] : jobs_) ordered.push_back(&entry);
  std::stable_sort(ordered.begin(), ordered.end(), [](const JobEntry* a, const JobEntry* b) {
    return std::tie(a->job.sequence, a->job.job_id) < std::tie(b->job.sequence, b->job.job_id);
  });
  return ordered;
}

absl::StatusOr<std::vector<StoredJob>> MemoryStore::LoadJobs() {
  absl::MutexLock lock(&mutex_);
  std::vector<StoredJob> jobs;
  for (const JobEntry* entry : OrderedJobs()) jobs.push_back(entry->job);
  return jobs;
}

absl::StatusOr<std::vector<StoredTrial>> MemoryStore::LoadTrials(const std::string& job_id) {
  absl::MutexLock lock(&mutex_);
  std::vector<StoredTrial> trials;
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return trials;
  for (const auto& [trial_id, trial] : it->second.trials) trials.push_back(trial);
  return trials;
}

absl::StatusOr<std::vector<std::string>> MemoryStore::LoadRecordLines(const std::string& job_id) {
  absl::MutexLock lock(&mutex_);
  std::vector<std::string> lines;
  auto append = [&lines](const JobEntry& entry) {
    for (const auto& [trial_id, trial] : entry.trials) {
      if (trial.done && !trial.record_line.empty()) lines.push_back(trial.record_line);
    }
  };
  if (!job_id.empty()) {
    auto it = jobs_.find(job_id);
    if (it != jobs_.end()) append(it->second);
    return lines;
  }
  for (const JobEntry* entry : OrderedJobs()) append(*entry);
  return lines;
}

absl::StatusOr<std::string> MemoryStore::LeaseKey() {
  absl::MutexLock lock(&mutex_);
  if (lease_key_.empty()) lease_key_ = NewLeaseKey();
  return lease_key_;
}

}  // namespace tunefleet
