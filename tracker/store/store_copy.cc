#include "tracker/store/store_copy.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<StoreCopy> CopyStore(Store& from, Store& to) {
  TF_ASSIGN_OR_RETURN(std::vector<StoredJob> existing, to.LoadJobs());
  if (!existing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the target store already holds ", existing.size(), " job(s) (the first: '",
                     existing.front().job_id, "'); a copy goes into an empty store only"));
  }
  TF_ASSIGN_OR_RETURN(std::vector<StoredJob> jobs, from.LoadJobs());
  StoreCopy copied;
  for (const StoredJob& job : jobs) {
    absl::StatusOr<std::vector<StoredTrial>> trials = from.LoadTrials(job.job_id);
    if (!trials.ok()) {
      return absl::Status(trials.status().code(),
                          absl::StrCat("job '", job.job_id, "': ", trials.status().message(), "; ",
                                       copied.jobs, " job(s) copied before it"));
    }
    TF_RETURN_IF_ERROR(to.PutJob(job));
    // In batches, so a job of many trials is a few transactions, not one
    // per trial, and no single transaction grows without bound.
    constexpr size_t kBatch = 500;
    for (size_t start = 0; start < trials->size(); start += kBatch) {
      const size_t end = std::min(trials->size(), start + kBatch);
      TF_RETURN_IF_ERROR(
          to.PutTrials(std::vector<StoredTrial>(trials->begin() + start, trials->begin() + end)));
    }
    ++copied.jobs;
    copied.trials += static_cast<int64_t>(trials->size());
    if (absl::StartsWith(job.message, kDamagedRowMessage)) ++copied.damaged_jobs;
  }
  return copied;
}

}  // namespace tunefleet
