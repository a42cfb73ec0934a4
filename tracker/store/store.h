// The tracker's persistent state behind one interface: jobs, their trials and
// the tuning records of finished trials. The tracker writes every change here
// before it acknowledges it to anyone, so a restarted tracker (on the same
// store) resumes every unfinished job with nothing lost or duplicated.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenSqliteStore(path));
//   TF_RETURN_IF_ERROR(store->PutJob(job));
//   TF_RETURN_IF_ERROR(store->PutTrials({trial}));
//
// What is stored of a trial is what survives a restart: its config, how many
// times a worker holding it was lost, and, once done, its result and record.
// Transient states (building, measuring) are not stored: after a restart an
// unfinished trial is built again.
//
// Implementations: OpenSqliteStore (sqlite_store.h, the default, WAL mode),
// OpenPostgresStore (postgres_store.h, for tracker replicas that share one
// database) and MemoryStore (memory_store.h, tests). Thread-safe: calls may come from any
// thread. Nothing is skipped silently: a job row that cannot be read back
// (a spec that does not parse, a bad state) loads as a FAILED job whose
// message starts with "store row damaged:" and names the row; a damaged
// trial row makes LoadTrials of its job fail with DataLoss naming the trial;
// a row without a readable job_id or sequence fails LoadJobs with DataLoss.
#ifndef TUNEFLEET_TRACKER_STORE_STORE_H_
#define TUNEFLEET_TRACKER_STORE_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

// The start of a job's message when its stored row could not be read.
inline constexpr char kDamagedRowMessage[] = "store row damaged: ";

struct StoredJob {
  std::string job_id;
  int64_t sequence = 0;  // submission order; job ids are unique per store
  proto::JobSpec spec;
  proto::JobState state = proto::QUEUED;
  std::string message;    // why it failed / ended
  double created_at = 0;  // unix seconds
  double started_at = 0;
  double finished_at = 0;
};

struct StoredTrial {
  std::string job_id;
  int64_t trial_id = 0;  // 0..n_trial-1 within its job
  std::string config_json;
  int64_t config_index = 0;
  int32_t task_index = 0;  // its task in the job's spec.tasks
  int32_t attempts = 0;    // times a worker holding it was lost
  // A validation measurement (validated winners): the search trial it
  // measures again and its pass; -1 for a search trial.
  int64_t validates = -1;
  int32_t validation_pass = 0;
  bool done = false;
  proto::TrialResult result;  // when done
  // When done: the AutoTVM-format record (a validated search trial's carries
  // its "validation"); empty for a validation measurement.
  std::string record_line;
};

// A job row that could not be read back (`damage`): the job as FAILED, with
// a message that starts with kDamagedRowMessage, names the damage and
// `repair_hint`; logged. One damaged row must not keep the tracker from
// serving every other job; the row itself is left as it was, for the
// operator to inspect or repair.
StoredJob DamagedJob(const StoredJob& job, const absl::Status& damage,
                     absl::string_view repair_hint);

// A stored job state, or DataLoss naming `what` when it is not a JobState.
[[nodiscard]] absl::StatusOr<proto::JobState> StoredJobState(int64_t state, absl::string_view what);

class Store {
 public:
  virtual ~Store() = default;

  // Inserts or replaces the job with this job_id (its trials stay).
  // InvalidArgument for an empty job_id.
  [[nodiscard]] virtual absl::Status PutJob(const StoredJob& job) = 0;
  // Inserts or replaces each (job_id, trial_id), all in one transaction: all
  // are written or none. NotFound if a trial's job was never put. The tracker
  // calls this under its scheduler lock on every trial transition, so a
  // one-trial call must stay cheap.
  [[nodiscard]] virtual absl::Status PutTrials(const std::vector<StoredTrial>& trials) = 0;

  // Every job, in sequence order (ties by job_id).
  [[nodiscard]] virtual absl::StatusOr<std::vector<StoredJob>> LoadJobs() = 0;
  // The trials of one job, in trial_id order (empty for an unknown job).
  [[nodiscard]] virtual absl::StatusOr<std::vector<StoredTrial>> LoadTrials(
      const std::string& job_id) = 0;
  // Non-empty record lines of done trials, of one job (trial_id order) or,
  // with an empty job_id, of every job (sequence, job_id, then trial_id
  // order).
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::string>> LoadRecordLines(
      const std::string& job_id) = 0;

  // The secret that signs lease ids (tracker/lease_tokens.h): kLeaseKeyHexDigits
  // hex digits, made by the first caller (NewLeaseKey) and the same for every
  // tracker on this store from then on, so a replica that takes over (or a
  // restarted tracker) accepts the results of leases its predecessor gave.
  // Not copied by store_copy.h: a new store signs afresh.
  [[nodiscard]] virtual absl::StatusOr<std::string> LeaseKey() = 0;
};

inline constexpr int kLeaseKeyHexDigits = 64;
// A new random lease key (kLeaseKeyHexDigits hex digits, from libsodium).
std::string NewLeaseKey();

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_STORE_H_
