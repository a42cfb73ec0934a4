#include "tracker/store/postgres_store.h"

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "tracker/store/postgres_connection.h"
#include "tracker/store/postgres_schema.h"

namespace tunefleet {
namespace {

constexpr const char* kRepairHint =
    "inspect the row with psql and see deploy/README.md (operations: a damaged store)";

class PostgresStore final : public Store {
 public:
  PostgresStore(std::unique_ptr<PgConnection> db, int64_t fence_epoch)
      : fence_epoch_(fence_epoch), db_(std::move(db)) {}

  [[nodiscard]] absl::Status PutJob(const StoredJob& job) override;
  [[nodiscard]] absl::Status PutTrials(const std::vector<StoredTrial>& trials) override;
  [[nodiscard]] absl::StatusOr<std::vector<StoredJob>> LoadJobs() override;
  [[nodiscard]] absl::StatusOr<std::vector<StoredTrial>> LoadTrials(
      const std::string& job_id) override;
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> LoadRecordLines(
      const std::string& job_id) override;
  [[nodiscard]] absl::StatusOr<std::string> LeaseKey() override;

 private:
  // With a fence epoch: the statement that fails a write's transaction
  // unless the leader row still carries it (tunefleet_fence).
  void AddFence(std::vector<PgStatement>& statements) const;
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> ReadLines(const char* sql,
                                                                   const PgParams& params,
                                                                   absl::string_view operation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const int64_t fence_epoch_;
  absl::Mutex mutex_;
  std::unique_ptr<PgConnection> db_ ABSL_GUARDED_BY(mutex_);
};

void PostgresStore::AddFence(std::vector<PgStatement>& statements) const {
  if (fence_epoch_ <= 0) return;
  PgParams epoch;
  epoch.Int8(fence_epoch_);
  statements.push_back({"SELECT tunefleet_fence($1)", std::move(epoch), "check the leader epoch"});
}

absl::Status PostgresStore::PutJob(const StoredJob& job) {
  if (job.job_id.empty()) return absl::InvalidArgumentError("PutJob: empty job_id");
  std::string spec;
  if (!job.spec.SerializeToString(&spec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PutJob: job '", job.job_id, "': spec does not serialize"));
  }
  std::vector<PgStatement> statements;
  AddFence(statements);
  PgParams params;
  params.Text(job.job_id)
      .Int8(job.sequence)
      .Bytes(spec)
      .Int4(job.state)
      .Bytes(job.message)
      .Float8(job.created_at)
      .Float8(job.started_at)
      .Float8(job.finished_at);
  statements.push_back(
      {"INSERT INTO tunefleet_jobs (job_id, sequence, spec, state, message, created_at, "
       "started_at, finished_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
       "ON CONFLICT (job_id) DO UPDATE SET sequence = excluded.sequence, "
       "spec = excluded.spec, state = excluded.state, message = excluded.message, "
       "created_at = excluded.created_at, started_at = excluded.started_at, "
       "finished_at = excluded.finished_at",
       std::move(params), "write the row"});
  absl::MutexLock lock(&mutex_);
  return db_->Atomically(absl::StrCat("put job '", job.job_id, "'"), statements).status();
}

absl::Status PostgresStore::PutTrials(const std::vector<StoredTrial>& trials) {
  if (trials.empty()) return absl::OkStatus();
  std::vector<PgStatement> statements;
  AddFence(statements);
  for (const StoredTrial& trial : trials) {
    std::string result;
    if (!trial.result.SerializeToString(&result)) {
      return absl::InvalidArgumentError(absl::StrCat("PutTrials: trial ", trial.trial_id,
                                                     " of job '", trial.job_id,
                                                     "': result does not serialize"));
    }
    PgParams params;
    params.Text(trial.job_id)
        .Int8(trial.trial_id)
        .Bytes(trial.config_json)
        .Int8(trial.config_index)
        .Int4(trial.attempts)
        .Bool(trial.done)
        .Bytes(result)
        .Bytes(trial.record_line)
        .Int4(trial.task_index)
        .Int8(trial.validates)
        .Int4(trial.validation_pass);
    // A trial of a job never put violates the foreign key: NotFound, and
    // the whole batch is rolled back.
    statements.push_back(
        {"INSERT INTO tunefleet_trials (job_id, trial_id, config_json, config_index, "
         "attempts, done, result, record_line, task_index, validates, validation_pass) "
         "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
         "ON CONFLICT (job_id, trial_id) DO UPDATE SET config_json = excluded.config_json, "
         "config_index = excluded.config_index, attempts = excluded.attempts, "
         "done = excluded.done, result = excluded.result, "
         "record_line = excluded.record_line, task_index = excluded.task_index, "
         "validates = excluded.validates, validation_pass = excluded.validation_pass",
         std::move(params),
         absl::StrCat("trial ", trial.trial_id, " of job '", trial.job_id,
                      "' (a job never put writes nothing)")});
  }
  absl::MutexLock lock(&mutex_);
  return db_->Atomically("PutTrials", statements).status();
}

absl::StatusOr<std::vector<StoredJob>> PostgresStore::LoadJobs() {
  absl::MutexLock lock(&mutex_);
  TF_ASSIGN_OR_RETURN(
      PgResult rows,
      db_->Exec("SELECT job_id, sequence, spec, state, message, created_at, started_at, "
                "finished_at FROM tunefleet_jobs ORDER BY sequence, job_id",
                PgParams(), "load jobs"));
  std::vector<StoredJob> jobs;
  jobs.reserve(rows.rows());
  for (int i = 0; i < rows.rows(); ++i) {
    StoredJob job;
    // The id and sequence first, so every later complaint can name the job.
    PgRow id_reader = rows.Row(i, absl::StrCat(db_->description(), ": job row ", i));
    job.job_id = id_reader.Text(0);
    job.sequence = id_reader.Int8(1);
    if (!id_reader.status().ok()) {
      return absl::DataLossError(absl::StrCat(id_reader.status().message(), "; ", kRepairHint));
    }
    PgRow row = rows.Row(i, absl::StrCat(db_->description(), ": job '", job.job_id, "'"));
    row.Proto(2, &job.spec);
    const int32_t state = row.Int4(3);
    job.message = std::string(row.Bytes(4));
    job.created_at = row.Float8(5);
    job.started_at = row.Float8(6);
    job.finished_at = row.Float8(7);
    absl::StatusOr<proto::JobState> job_state =
        StoredJobState(state, absl::StrCat(db_->description(), ": job '", job.job_id, "'"));
    absl::Status damage = row.status();
    if (damage.ok()) damage = job_state.status();
    if (!damage.ok()) {
      jobs.push_back(DamagedJob(job, damage, kRepairHint));
      continue;
    }
    job.state = *job_state;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

absl::StatusOr<std::vector<StoredTrial>> PostgresStore::LoadTrials(const std::string& job_id) {
  const std::string operation = absl::StrCat("load trials of job '", job_id, "'");
  PgParams id;
  id.Text(job_id);
  absl::MutexLock lock(&mutex_);
  TF_ASSIGN_OR_RETURN(
      PgResult rows,
      db_->Exec("SELECT trial_id, config_json, config_index, attempts, done, result, record_line, "
                "task_index, validates, validation_pass FROM tunefleet_trials WHERE job_id = $1 "
                "ORDER BY trial_id",
                id, operation));
  std::vector<StoredTrial> trials;
  trials.reserve(rows.rows());
  for (int i = 0; i < rows.rows(); ++i) {
    StoredTrial trial;
    trial.job_id = job_id;
    PgRow id_reader =
        rows.Row(i, absl::StrCat(db_->description(), ": a trial of job '", job_id, "'"));
    trial.trial_id = id_reader.Int8(0);
    TF_RETURN_IF_ERROR(id_reader.status());
    PgRow row = rows.Row(
        i, absl::StrCat(db_->description(), ": trial ", trial.trial_id, " of job '", job_id, "'"));
    trial.config_json = std::string(row.Bytes(1));
    trial.config_index = row.Int8(2);
    trial.attempts = row.Int4(3);
    trial.done = row.Bool(4);
    row.Proto(5, &trial.result);
    trial.record_line = std::string(row.Bytes(6));
    trial.task_index = row.Int4(7);
    trial.validates = row.Int8(8);
    trial.validation_pass = row.Int4(9);
    if (!row.status().ok()) {
      return absl::DataLossError(absl::StrCat(row.status().message(), "; ", kRepairHint));
    }
    trials.push_back(std::move(trial));
  }
  return trials;
}

absl::StatusOr<std::string> PostgresStore::LeaseKey() {
  PgParams params;
  params.Text(NewLeaseKey());
  absl::MutexLock lock(&mutex_);
  // The first replica's key stays (ON CONFLICT DO NOTHING), whoever reads it.
  TF_RETURN_IF_ERROR(db_->Exec("INSERT INTO tunefleet_meta (key, value) VALUES ('lease_key', $1) "
                               "ON CONFLICT (key) DO NOTHING",
                               params, "store the lease key")
                         .status());
  TF_ASSIGN_OR_RETURN(PgResult rows,
                      db_->Exec("SELECT value FROM tunefleet_meta WHERE key = 'lease_key'",
                                PgParams(), "read the lease key"));
  if (rows.rows() != 1) {
    return absl::DataLossError(
        absl::StrCat(db_->description(), ": no lease key in tunefleet_meta"));
  }
  std::string key = rows.Row(0, absl::StrCat(db_->description(), ": lease key")).Text(0);
  if (key.size() != kLeaseKeyHexDigits) {
    return absl::DataLossError(
        absl::StrCat(db_->description(), ": the lease key in tunefleet_meta is damaged"));
  }
  return key;
}

absl::StatusOr<std::vector<std::string>> PostgresStore::ReadLines(const char* sql,
                                                                  const PgParams& params,
                                                                  absl::string_view operation) {
  TF_ASSIGN_OR_RETURN(PgResult rows, db_->Exec(sql, params, operation));
  std::vector<std::string> lines;
  lines.reserve(rows.rows());
  for (int i = 0; i < rows.rows(); ++i) {
    PgRow row = rows.Row(i, absl::StrCat(db_->description(), ": ", operation, ", line ", i));
    lines.emplace_back(row.Bytes(0));
    TF_RETURN_IF_ERROR(row.status());
  }
  return lines;
}

absl::StatusOr<std::vector<std::string>> PostgresStore::LoadRecordLines(const std::string& job_id) {
  absl::MutexLock lock(&mutex_);
  if (job_id.empty()) {
    return ReadLines(
        "SELECT t.record_line FROM tunefleet_trials AS t JOIN tunefleet_jobs AS j "
        "ON j.job_id = t.job_id WHERE t.done AND length(t.record_line) > 0 "
        "ORDER BY j.sequence, j.job_id, t.trial_id",
        PgParams(), "load every record line");
  }
  PgParams id;
  id.Text(job_id);
  return ReadLines(
      "SELECT record_line FROM tunefleet_trials WHERE job_id = $1 AND done "
      "AND length(record_line) > 0 ORDER BY trial_id",
      id, absl::StrCat("load the record lines of job '", job_id, "'"));
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(
    const std::string& address, PostgresStoreOptions options) {
  PgConnectionOptions connection;
  connection.call_timeout = options.call_timeout;
  TF_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Open(address, connection));
  TF_RETURN_IF_ERROR(EnsurePostgresSchema(*db));
  return std::unique_ptr<Store>(
      std::make_unique<PostgresStore>(std::move(db), options.fence_epoch));
}

}  // namespace tunefleet
