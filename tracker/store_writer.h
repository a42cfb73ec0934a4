// StoreWriter: every write the scheduler makes to the Store, in one place,
// each named after the transition it makes durable: a job's row, newly
// proposed trials, a trial's attempt count after a lost worker, a trial's
// result with its record line, validated trials' record lines.
//
// A failed write comes back as the store's code with a message that starts
// "store write failed (<what>): ", so the caller can pass it on as is. The
// rule the callers keep (trial_lifecycle.h): nothing is acknowledged to a tuner, a
// watcher or a worker until its write has succeeded. Not thread-safe: the
// Scheduler facade calls everything under its one mutex (the Store itself is
// thread-safe).
//
//   StoreWriter writer(store);
//   absl::Status stored = writer.PutResult(job, trial);
//   if (!stored.ok()) { /* keep the result, retry on the next tick */ }
#ifndef TUNEFLEET_TRACKER_STORE_WRITER_H_
#define TUNEFLEET_TRACKER_STORE_WRITER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tracker/job_table.h"
#include "tracker/store/store.h"

namespace tunefleet {

class StoreWriter {
 public:
  // `store` must outlive the writer.
  explicit StoreWriter(Store* store) : store_(store) {}

  // The job's row as it is in `job` (state, message, times).
  [[nodiscard]] absl::Status PutJob(const StoredJob& job);
  // New trials of `job`, all or none.
  [[nodiscard]] absl::Status PutNewTrials(const Job& job, const std::vector<Trial>& trials);
  // A trial that goes back to its queue: its attempt count, not done.
  [[nodiscard]] absl::Status PutAttempts(const Job& job, const Trial& trial);
  // A finished trial: done, with trial.result and the record line made from
  // it. `job` must be loaded (Job::loaded).
  [[nodiscard]] absl::Status PutResult(const Job& job, const Trial& trial);
  // Done search trials written again with their validation (Trial::
  // validation) in their record lines, all or none.
  [[nodiscard]] absl::Status PutValidated(const Job& job, const std::vector<Trial>& trials);

 private:
  Store* const store_;
};

// The AutoTVM-format record line of `trial` (with trial.result and, once
// validated, trial.validation) of `job`; "" for a validation measurement.
std::string RecordLineOf(const Job& job, const Trial& trial);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_WRITER_H_
