#include "tracker/store/sqlite_store.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "common/status_macros.h"
#include "tracker/store/sqlite_schema.h"

namespace tunefleet {
namespace {

constexpr const char* kRepairHint =
    "check the store with `tunefleet_tracker --store=<file> --store_check` and see "
    "deploy/README.md "
    "(operations: a damaged store)";

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using DbPtr = std::unique_ptr<sqlite3, DbCloser>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// Reads one column, checking its storage class, so a hand-edited or damaged
// row is reported rather than read as zeros.
class RowReader {
 public:
  RowReader(sqlite3_stmt* stmt, std::string what) : stmt_(stmt), what_(std::move(what)) {}

  int64_t Int(int column) {
    Expect(column, SQLITE_INTEGER, "an integer");
    return sqlite3_column_int64(stmt_, column);
  }
  double Real(int column) {
    const int type = sqlite3_column_type(stmt_, column);
    if (type != SQLITE_FLOAT && type != SQLITE_INTEGER) Fail(column, "a number");
    return sqlite3_column_double(stmt_, column);
  }
  std::string Text(int column) {
    Expect(column, SQLITE_TEXT, "text");
    return Bytes(column);
  }
  absl::string_view Blob(int column) {
    Expect(column, SQLITE_BLOB, "a blob");
    const void* data = sqlite3_column_blob(stmt_, column);
    const int size = sqlite3_column_bytes(stmt_, column);
    return data == nullptr ? absl::string_view()
                           : absl::string_view(static_cast<const char*>(data), size);
  }
  template <typename Message>
  void Proto(int column, Message* message) {
    absl::string_view bytes = Blob(column);
    if (!message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      Fail(column, absl::StrCat("a serialized ", message->GetTypeName()));
    }
  }

  [[nodiscard]] absl::Status status() const { return status_; }

 private:
  std::string Bytes(int column) {
    const unsigned char* data = sqlite3_column_text(stmt_, column);
    const int size = sqlite3_column_bytes(stmt_, column);
    return data == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(data), size);
  }
  void Expect(int column, int type, absl::string_view expected) {
    if (sqlite3_column_type(stmt_, column) != type) Fail(column, expected);
  }
  void Fail(int column, absl::string_view expected) {
    if (!status_.ok()) return;
    status_ = absl::DataLossError(absl::StrCat(
        what_, ": column '", sqlite3_column_name(stmt_, column), "' is not ", expected));
  }

  sqlite3_stmt* stmt_;
  std::string what_;
  absl::Status status_;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(std::string path, DbPtr db) : path_(std::move(path)), db_(std::move(db)) {}

  // Prepares every statement the calls use, once.
  [[nodiscard]] absl::Status PrepareStatements() ABSL_LOCKS_EXCLUDED(mutex_);

  [[nodiscard]] absl::Status PutJob(const StoredJob& job) override;
  [[nodiscard]] absl::Status PutTrials(const std::vector<StoredTrial>& trials) override;
  [[nodiscard]] absl::StatusOr<std::vector<StoredJob>> LoadJobs() override;
  [[nodiscard]] absl::StatusOr<std::vector<StoredTrial>> LoadTrials(
      const std::string& job_id) override;
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> LoadRecordLines(
      const std::string& job_id) override;
  [[nodiscard]] absl::StatusOr<std::string> LeaseKey() override;

 private:
  // Resets a cached statement when a call is done with it: clears its
  // bindings (which may point at the caller's strings) and ends its read.
  class Use {
   public:
    explicit Use(const StmtPtr& stmt) : stmt_(stmt.get()) {}
    ~Use() {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
    sqlite3_stmt* get() const { return stmt_; }

   private:
    sqlite3_stmt* stmt_;
  };

  [[nodiscard]] absl::Status Error(int rc, absl::string_view operation) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  [[nodiscard]] absl::Status Prepare(const char* sql, StmtPtr* stmt)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Steps a statement that returns no rows.
  [[nodiscard]] absl::Status Run(const StmtPtr& stmt, absl::string_view operation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Runs `body` between BEGIN IMMEDIATE and COMMIT; rolls back if it fails.
  template <typename Body>
  [[nodiscard]] absl::Status InTransaction(absl::string_view operation, Body body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  [[nodiscard]] absl::Status WriteTrial(const StoredTrial& trial)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> ReadLines(const StmtPtr& stmt,
                                                                   absl::string_view operation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const std::string path_;
  absl::Mutex mutex_;
  // Declared before the statements so they are finalized before it closes.
  DbPtr db_ ABSL_GUARDED_BY(mutex_);
  StmtPtr begin_ ABSL_GUARDED_BY(mutex_);
  StmtPtr commit_ ABSL_GUARDED_BY(mutex_);
  StmtPtr rollback_ ABSL_GUARDED_BY(mutex_);
  StmtPtr job_exists_ ABSL_GUARDED_BY(mutex_);
  StmtPtr upsert_job_ ABSL_GUARDED_BY(mutex_);
  StmtPtr upsert_trial_ ABSL_GUARDED_BY(mutex_);
  StmtPtr load_jobs_ ABSL_GUARDED_BY(mutex_);
  StmtPtr load_trials_ ABSL_GUARDED_BY(mutex_);
  StmtPtr load_job_lines_ ABSL_GUARDED_BY(mutex_);
  StmtPtr load_all_lines_ ABSL_GUARDED_BY(mutex_);
};

absl::Status SqliteStore::Error(int rc, absl::string_view operation) const {
  return absl::Status(SqliteCode(rc), absl::StrCat("sqlite store ", path_, ": ", operation, ": ",
                                                   sqlite3_errmsg(db_.get()), " (code ", rc, ")"));
}

absl::Status SqliteStore::Prepare(const char* sql, StmtPtr* stmt) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql, -1, SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) return Error(rc, absl::StrCat("prepare '", sql, "'"));
  stmt->reset(raw);
  return absl::OkStatus();
}

absl::Status SqliteStore::PrepareStatements() {
  absl::MutexLock lock(&mutex_);
  TF_RETURN_IF_ERROR(Prepare("BEGIN IMMEDIATE", &begin_));
  TF_RETURN_IF_ERROR(Prepare("COMMIT", &commit_));
  TF_RETURN_IF_ERROR(Prepare("ROLLBACK", &rollback_));
  TF_RETURN_IF_ERROR(Prepare("SELECT 1 FROM jobs WHERE job_id = ?1", &job_exists_));
  TF_RETURN_IF_ERROR(Prepare(
      "INSERT INTO jobs (job_id, sequence, spec, state, message, created_at, started_at, "
      "finished_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "ON CONFLICT (job_id) DO UPDATE SET sequence = excluded.sequence, spec = excluded.spec, "
      "state = excluded.state, message = excluded.message, created_at = excluded.created_at, "
      "started_at = excluded.started_at, finished_at = excluded.finished_at",
      &upsert_job_));
  TF_RETURN_IF_ERROR(Prepare(
      "INSERT INTO trials (job_id, trial_id, config_json, config_index, attempts, done, result, "
      "record_line, task_index, validates, validation_pass) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
      "ON CONFLICT (job_id, trial_id) DO UPDATE SET config_json = excluded.config_json, "
      "config_index = excluded.config_index, attempts = excluded.attempts, done = excluded.done, "
      "result = excluded.result, record_line = excluded.record_line, "
      "task_index = excluded.task_index, validates = excluded.validates, "
      "validation_pass = excluded.validation_pass",
      &upsert_trial_));
  TF_RETURN_IF_ERROR(
      Prepare("SELECT job_id, sequence, spec, state, message, created_at, started_at, finished_at "
              "FROM jobs ORDER BY sequence, job_id",
              &load_jobs_));
  TF_RETURN_IF_ERROR(Prepare(
      "SELECT trial_id, config_json, config_index, attempts, done, result, record_line, "
      "task_index, validates, validation_pass FROM trials WHERE job_id = ?1 ORDER BY trial_id",
      &load_trials_));
  TF_RETURN_IF_ERROR(Prepare(
      "SELECT record_line FROM trials WHERE job_id = ?1 AND done != 0 AND record_line != '' "
      "ORDER BY trial_id",
      &load_job_lines_));
  TF_RETURN_IF_ERROR(
      Prepare("SELECT t.record_line FROM trials AS t JOIN jobs AS j ON j.job_id = t.job_id "
              "WHERE t.done != 0 AND t.record_line != '' ORDER BY j.sequence, j.job_id, t.trial_id",
              &load_all_lines_));
  return absl::OkStatus();
}

absl::Status SqliteStore::Run(const StmtPtr& stmt, absl::string_view operation) {
  Use use(stmt);
  const int rc = sqlite3_step(use.get());
  if (rc != SQLITE_DONE) return Error(rc, operation);
  return absl::OkStatus();
}

template <typename Body>
absl::Status SqliteStore::InTransaction(absl::string_view operation, Body body) {
  TF_RETURN_IF_ERROR(Run(begin_, absl::StrCat(operation, ": begin transaction")));
  absl::Status status = body();
  if (status.ok()) status = Run(commit_, absl::StrCat(operation, ": commit"));
  // A failed statement may already have ended the transaction; roll back only
  // if one is still open.
  if (!status.ok() && sqlite3_get_autocommit(db_.get()) == 0) {
    Use use(rollback_);
    sqlite3_step(use.get());
  }
  return status;
}

// Binds parameters in order, keeping the first failure. Text and blobs are
// bound without copying: they must outlive the step.
class Binder {
 public:
  explicit Binder(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Binder& Text(absl::string_view text) {
    return Check(
        sqlite3_bind_text64(stmt_, ++index_, text.data(), text.size(), SQLITE_STATIC, SQLITE_UTF8));
  }
  Binder& Blob(absl::string_view bytes) {
    // A non-null pointer even for zero bytes: a null one would bind NULL.
    static const char kEmpty = 0;
    return Check(sqlite3_bind_blob64(stmt_, ++index_, bytes.empty() ? &kEmpty : bytes.data(),
                                     bytes.size(), SQLITE_STATIC));
  }
  Binder& Int(int64_t value) { return Check(sqlite3_bind_int64(stmt_, ++index_, value)); }
  Binder& Real(double value) { return Check(sqlite3_bind_double(stmt_, ++index_, value)); }
  int rc() const { return rc_; }

 private:
  Binder& Check(int rc) {
    if (rc_ == SQLITE_OK) rc_ = rc;
    return *this;
  }
  sqlite3_stmt* stmt_;
  int index_ = 0;
  int rc_ = SQLITE_OK;
};

absl::Status SqliteStore::PutJob(const StoredJob& job) {
  if (job.job_id.empty()) return absl::InvalidArgumentError("PutJob: empty job_id");
  std::string spec;
  if (!job.spec.SerializeToString(&spec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("PutJob: job '", job.job_id, "': spec does not serialize"));
  }
  const std::string operation = absl::StrCat("put job '", job.job_id, "'");
  absl::MutexLock lock(&mutex_);
  Use use(upsert_job_);
  Binder bind(use.get());
  bind.Text(job.job_id)
      .Int(job.sequence)
      .Blob(spec)
      .Int(job.state)
      .Text(job.message)
      .Real(job.created_at)
      .Real(job.started_at)
      .Real(job.finished_at);
  if (bind.rc() != SQLITE_OK) return Error(bind.rc(), operation);
  // One statement in autocommit mode is its own transaction.
  const int rc = sqlite3_step(use.get());
  if (rc != SQLITE_DONE) return Error(rc, operation);
  return absl::OkStatus();
}

absl::Status SqliteStore::WriteTrial(const StoredTrial& trial) {
  std::string result;
  if (!trial.result.SerializeToString(&result)) {
    return absl::InvalidArgumentError(absl::StrCat("PutTrials: trial ", trial.trial_id, " of job '",
                                                   trial.job_id, "': result does not serialize"));
  }
  Use use(upsert_trial_);
  Binder bind(use.get());
  bind.Text(trial.job_id)
      .Int(trial.trial_id)
      .Text(trial.config_json)
      .Int(trial.config_index)
      .Int(trial.attempts)
      .Int(trial.done ? 1 : 0)
      .Blob(result)
      .Text(trial.record_line)
      .Int(trial.task_index)
      .Int(trial.validates)
      .Int(trial.validation_pass);
  int rc = bind.rc();
  if (rc == SQLITE_OK) rc = sqlite3_step(use.get());
  if (rc != SQLITE_DONE && rc != SQLITE_OK) {
    return Error(rc, absl::StrCat("put trial ", trial.trial_id, " of job '", trial.job_id, "'"));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::PutTrials(const std::vector<StoredTrial>& trials) {
  if (trials.empty()) return absl::OkStatus();
  absl::MutexLock lock(&mutex_);
  return InTransaction("PutTrials", [&]() -> absl::Status {
    const std::string* checked_job = nullptr;  // batches are usually of one job
    for (const StoredTrial& trial : trials) {
      if (checked_job == nullptr || *checked_job != trial.job_id) {
        Use use(job_exists_);
        const int bind_rc = Binder(use.get()).Text(trial.job_id).rc();
        if (bind_rc != SQLITE_OK) return Error(bind_rc, "PutTrials: look up job");
        const int rc = sqlite3_step(use.get());
        if (rc == SQLITE_DONE) {
          return absl::NotFoundError(absl::StrCat("PutTrials: trial ", trial.trial_id, " of job '",
                                                  trial.job_id,
                                                  "': the job was never put; nothing written"));
        }
        if (rc != SQLITE_ROW)
          return Error(rc, absl::StrCat("PutTrials: look up job '", trial.job_id, "'"));
        checked_job = &trial.job_id;
      }
      TF_RETURN_IF_ERROR(WriteTrial(trial));
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<StoredJob>> SqliteStore::LoadJobs() {
  absl::MutexLock lock(&mutex_);
  Use use(load_jobs_);
  std::vector<StoredJob> jobs;
  int rc;
  while ((rc = sqlite3_step(use.get())) == SQLITE_ROW) {
    StoredJob job;
    // The id and sequence first, so every later complaint can name the job;
    // without them the row cannot even be reported as a job.
    RowReader id_reader(use.get(), absl::StrCat("sqlite store ", path_, ": job row ", jobs.size()));
    job.job_id = id_reader.Text(0);
    job.sequence = id_reader.Int(1);
    if (!id_reader.status().ok()) {
      return absl::DataLossError(absl::StrCat(id_reader.status().message(), "; ", kRepairHint));
    }
    RowReader row(use.get(), absl::StrCat("sqlite store ", path_, ": job '", job.job_id, "'"));
    row.Proto(2, &job.spec);
    const int64_t state = row.Int(3);
    job.message = row.Text(4);
    job.created_at = row.Real(5);
    job.started_at = row.Real(6);
    job.finished_at = row.Real(7);
    absl::StatusOr<proto::JobState> job_state =
        StoredJobState(state, absl::StrCat("sqlite store ", path_, ": job '", job.job_id, "'"));
    absl::Status damage = row.status();
    if (damage.ok()) damage = job_state.status();
    if (!damage.ok()) {
      jobs.push_back(DamagedJob(job, damage, kRepairHint));
      continue;
    }
    job.state = *job_state;
    jobs.push_back(std::move(job));
  }
  if (rc != SQLITE_DONE) return Error(rc, "load jobs");
  return jobs;
}

absl::StatusOr<std::vector<StoredTrial>> SqliteStore::LoadTrials(const std::string& job_id) {
  const std::string operation = absl::StrCat("load trials of job '", job_id, "'");
  absl::MutexLock lock(&mutex_);
  Use use(load_trials_);
  const int bind_rc = Binder(use.get()).Text(job_id).rc();
  if (bind_rc != SQLITE_OK) return Error(bind_rc, operation);
  std::vector<StoredTrial> trials;
  int rc;
  while ((rc = sqlite3_step(use.get())) == SQLITE_ROW) {
    StoredTrial trial;
    trial.job_id = job_id;
    RowReader id_reader(use.get(),
                        absl::StrCat("sqlite store ", path_, ": a trial of job '", job_id, "'"));
    trial.trial_id = id_reader.Int(0);
    TF_RETURN_IF_ERROR(id_reader.status());
    RowReader row(use.get(), absl::StrCat("sqlite store ", path_, ": trial ", trial.trial_id,
                                          " of job '", job_id, "'"));
    trial.config_json = row.Text(1);
    trial.config_index = row.Int(2);
    trial.attempts = static_cast<int32_t>(row.Int(3));
    trial.done = row.Int(4) != 0;
    row.Proto(5, &trial.result);
    trial.record_line = row.Text(6);
    trial.task_index = static_cast<int32_t>(row.Int(7));
    trial.validates = row.Int(8);
    trial.validation_pass = static_cast<int32_t>(row.Int(9));
    if (!row.status().ok()) {
      return absl::DataLossError(absl::StrCat(row.status().message(), "; ", kRepairHint));
    }
    trials.push_back(std::move(trial));
  }
  if (rc != SQLITE_DONE) return Error(rc, operation);
  return trials;
}

absl::StatusOr<std::vector<std::string>> SqliteStore::ReadLines(const StmtPtr& stmt,
                                                                absl::string_view operation) {
  std::vector<std::string> lines;
  int rc;
  while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
    RowReader row(stmt.get(), absl::StrCat("sqlite store ", path_, ": ", operation,
                                           ": record line ", lines.size()));
    lines.push_back(row.Text(0));
    TF_RETURN_IF_ERROR(row.status());
  }
  if (rc != SQLITE_DONE) return Error(rc, operation);
  return lines;
}

absl::StatusOr<std::vector<std::string>> SqliteStore::LoadRecordLines(const std::string& job_id) {
  absl::MutexLock lock(&mutex_);
  if (job_id.empty()) {
    Use use(load_all_lines_);
    return ReadLines(load_all_lines_, "load record lines of every job");
  }
  const std::string operation = absl::StrCat("load record lines of job '", job_id, "'");
  Use use(load_job_lines_);
  const int bind_rc = Binder(use.get()).Text(job_id).rc();
  if (bind_rc != SQLITE_OK) return Error(bind_rc, operation);
  return ReadLines(load_job_lines_, operation);
}

absl::StatusOr<std::string> SqliteStore::LeaseKey() {
  absl::MutexLock lock(&mutex_);
  // The first caller's key stays (INSERT OR IGNORE), whoever reads it.
  const std::string insert = absl::StrCat(
      "INSERT OR IGNORE INTO meta (key, value) VALUES ('lease_key', '", NewLeaseKey(), "')");
  TF_RETURN_IF_ERROR(SqliteExec(db_.get(), path_, insert.c_str(), "store the lease key"));
  TF_ASSIGN_OR_RETURN(
      std::optional<std::string> key,
      SqliteQueryText(db_.get(), path_, "SELECT value FROM meta WHERE key = 'lease_key'",
                      "read the lease key"));
  if (!key.has_value() || key->size() != kLeaseKeyHexDigits) {
    return absl::DataLossError(
        absl::StrCat("sqlite store ", path_, ": the lease key in table meta is damaged"));
  }
  return *key;
}

// ---------------------------------------------------------------- opening

// A store that cannot be opened because of damage: the way out, in the error.
[[nodiscard]] absl::Status WithRepairHint(const absl::Status& status, const std::string& path) {
  if (status.code() != absl::StatusCode::kDataLoss &&
      status.code() != absl::StatusCode::kFailedPrecondition) {
    return status;
  }
  return absl::Status(
      status.code(),
      absl::StrCat(status.message(),
                   ". The tracker will not start on it. Stop the tracker and keep a copy, then "
                   "either restore the file from backup, or recover what SQLite can read: "
                   "`sqlite3 ",
                   path, " .recover | sqlite3 ", path, ".recovered` and check it with ",
                   "`tunefleet_tracker --store=", path, ".recovered --store_check` before moving ",
                   "it over ", path, " (and removing ", path, "-wal and ", path,
                   "-shm); or remove it to start with an empty store"));
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                                                     SqliteStoreOptions options) {
  if (path.empty()) return absl::InvalidArgumentError("OpenSqliteStore: empty path");
  // SQLite would silently make a 0-byte file a new empty store: a store
  // truncated by a bad copy or a full disk would lose every job unnoticed.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("store ", path,
                     " is empty (0 bytes) — not a TuneFleet store; remove it to start fresh or "
                     "restore it from backup"));
  }
  sqlite3* raw = nullptr;
  // NOMUTEX: SqliteStore serializes every use of the connection itself.
  const int open_rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  DbPtr db(raw);
  if (open_rc != SQLITE_OK) {
    return absl::Status(SqliteCode(open_rc),
                        absl::StrCat("sqlite store ", path, ": open: ",
                                     raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(open_rc),
                                     " (code ", open_rc, ")"));
  }
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), options.busy_timeout_ms);

  // The first statement to touch the file: a file that is not a database
  // fails here.
  absl::StatusOr<std::optional<std::string>> journal_mode =
      SqliteQueryText(db.get(), path, "PRAGMA journal_mode = WAL", "switch to WAL mode");
  if (!journal_mode.ok()) return WithRepairHint(journal_mode.status(), path);
  if (!journal_mode->has_value() || **journal_mode != "wal") {
    return absl::FailedPreconditionError(absl::StrCat(
        "sqlite store ", path, ": could not switch to WAL mode (journal_mode is '",
        journal_mode->value_or(""), "'); is it on a filesystem without shared memory?"));
  }
  // Damage inside the file (a torn page, a bad copy) is found here rather
  // than mid-job. quick_check reads every page once: a second or so per GB.
  absl::StatusOr<std::optional<std::string>> check =
      SqliteQueryText(db.get(), path, "PRAGMA quick_check(3)", "check integrity");
  if (!check.ok()) return WithRepairHint(check.status(), path);
  if (check->value_or("ok") != "ok") {
    return WithRepairHint(
        absl::DataLossError(
            absl::StrCat("sqlite store ", path, " is damaged (PRAGMA quick_check: ", **check, ")")),
        path);
  }
  TF_RETURN_IF_ERROR(SqliteExec(
      db.get(), path,
      options.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
      "set synchronous"));
  TF_RETURN_IF_ERROR(InitSqliteSchema(db.get(), path));

  auto store = std::make_unique<SqliteStore>(path, std::move(db));
  TF_RETURN_IF_ERROR(store->PrepareStatements());
  return std::unique_ptr<Store>(std::move(store));
}

[[nodiscard]] absl::StatusOr<SqliteStoreCheck> CheckSqliteStore(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("store ", path, " does not exist"));
  }
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenSqliteStore(path));
  SqliteStoreCheck result;
  TF_ASSIGN_OR_RETURN(std::vector<StoredJob> jobs, store->LoadJobs());
  for (const StoredJob& job : jobs) {
    ++result.jobs;
    if (absl::StartsWith(job.message, kDamagedRowMessage)) {
      result.problems.push_back(absl::StrCat("job '", job.job_id, "': ", job.message));
    }
    absl::StatusOr<std::vector<StoredTrial>> trials = store->LoadTrials(job.job_id);
    if (!trials.ok()) {
      result.problems.push_back(std::string(trials.status().message()));
      continue;
    }
    result.trials += static_cast<int64_t>(trials->size());
    absl::StatusOr<std::vector<std::string>> lines = store->LoadRecordLines(job.job_id);
    if (!lines.ok()) result.problems.push_back(std::string(lines.status().message()));
  }
  return result;
}

int RunSqliteStoreCheck(const std::string& path, std::ostream& out) {
  absl::StatusOr<SqliteStoreCheck> check = CheckSqliteStore(path);
  if (!check.ok()) {
    out << check.status().message() << "\n";
    return 1;
  }
  for (const std::string& problem : check->problems) out << problem << "\n";
  out << "store " << path << ": " << check->jobs << " jobs, " << check->trials << " trials, "
      << check->problems.size() << " damaged rows\n";
  return check->problems.empty() ? 0 : 1;
}

}  // namespace tunefleet
