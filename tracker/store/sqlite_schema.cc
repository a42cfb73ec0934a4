#include "tracker/store/sqlite_schema.h"

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// Version 1. Later versions add migrations in MigrateSchema; never edit this.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE jobs (
  job_id      TEXT PRIMARY KEY NOT NULL,
  sequence    INTEGER NOT NULL,
  spec        BLOB NOT NULL,     -- proto::JobSpec
  state       INTEGER NOT NULL,  -- proto::JobState
  message     TEXT NOT NULL,
  created_at  REAL NOT NULL,
  started_at  REAL NOT NULL,
  finished_at REAL NOT NULL
);
CREATE INDEX jobs_by_sequence ON jobs (sequence, job_id);
CREATE TABLE trials (
  job_id       TEXT NOT NULL,
  trial_id     INTEGER NOT NULL,
  config_json  TEXT NOT NULL,
  config_index INTEGER NOT NULL,
  attempts     INTEGER NOT NULL,
  done         INTEGER NOT NULL,
  result       BLOB NOT NULL,    -- proto::TrialResult
  record_line  TEXT NOT NULL,
  PRIMARY KEY (job_id, trial_id)
) WITHOUT ROWID;
)sql";

// Version 2: a trial names its task in the job's spec.tasks (model jobs).
constexpr const char* kMigrateV1ToV2 =
    "ALTER TABLE trials ADD COLUMN task_index INTEGER NOT NULL DEFAULT 0";

// Version 3: validation measurements are trials too (validated winners):
// the search trial one validates (-1 for a search trial) and its pass.
constexpr const char* kMigrateV2ToV3 =
    "ALTER TABLE trials ADD COLUMN validates INTEGER NOT NULL DEFAULT -1; "
    "ALTER TABLE trials ADD COLUMN validation_pass INTEGER NOT NULL DEFAULT 0";

// Brings a database of schema `version` to the current one, step by step.
[[nodiscard]] absl::Status Migrate(sqlite3* db, const std::string& path, int version) {
  if (version < 2)
    TF_RETURN_IF_ERROR(SqliteExec(db, path, kMigrateV1ToV2, "migrate schema 1 -> 2"));
  if (version < 3)
    TF_RETURN_IF_ERROR(SqliteExec(db, path, kMigrateV2ToV3, "migrate schema 2 -> 3"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusCode SqliteCode(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
      return absl::StatusCode::kUnavailable;
    case SQLITE_FULL:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_CORRUPT:
      return absl::StatusCode::kDataLoss;
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kPermissionDenied;
    default:
      return absl::StatusCode::kInternal;
  }
}

// Runs SQL that returns no rows (or whose rows do not matter).
[[nodiscard]] absl::Status SqliteExec(sqlite3* db, const std::string& path, const char* sql,
                                      absl::string_view operation) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  std::string hint;
  if ((rc & 0xff) == SQLITE_NOTADB) hint = "; the file exists but is not a SQLite database";
  return absl::Status(SqliteCode(rc), absl::StrCat("sqlite store ", path, ": ", operation, ": ",
                                                   text, " (code ", rc, ")", hint));
}

// Reads the single text value a query returns; empty optional if no row.
[[nodiscard]] absl::StatusOr<std::optional<std::string>> SqliteQueryText(
    sqlite3* db, const std::string& path, const char* sql, absl::string_view operation) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &raw, nullptr);
  StmtPtr stmt(raw);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    if (rc == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt.get(), 0);
      return std::optional<std::string>(text == nullptr ? "" : reinterpret_cast<const char*>(text));
    }
  }
  std::string hint;
  if ((rc & 0xff) == SQLITE_NOTADB) hint = "; the file exists but is not a SQLite database";
  return absl::Status(SqliteCode(rc), absl::StrCat("sqlite store ", path, ": ", operation, ": ",
                                                   sqlite3_errmsg(db), " (code ", rc, ")", hint));
}

// Creates the schema in a new file, checks the version of an existing one.
[[nodiscard]] absl::Status InitSqliteSchema(sqlite3* db, const std::string& path) {
  TF_RETURN_IF_ERROR(SqliteExec(db, path, "BEGIN IMMEDIATE", "begin schema check"));
  auto check = [&]() -> absl::Status {
    TF_RETURN_IF_ERROR(SqliteExec(
        db, path,
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)",
        "create table meta"));
    TF_ASSIGN_OR_RETURN(
        std::optional<std::string> version_text,
        SqliteQueryText(db, path, "SELECT value FROM meta WHERE key = 'schema_version'",
                        "read schema_version"));
    if (!version_text.has_value()) {
      TF_ASSIGN_OR_RETURN(
          std::optional<std::string> other_table,
          SqliteQueryText(
              db, path,
              "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'meta' LIMIT 1",
              "list tables"));
      if (other_table.has_value()) {
        return absl::FailedPreconditionError(
            absl::StrCat("sqlite store ", path, ": the database has tables (e.g. '", *other_table,
                         "') but no schema_version in table meta; it is not a TuneFleet store"));
      }
      TF_RETURN_IF_ERROR(SqliteExec(db, path, kSchemaV1, "create schema"));
      TF_RETURN_IF_ERROR(Migrate(db, path, 1));
      const std::string insert =
          absl::StrCat("INSERT INTO meta (key, value) VALUES ('schema_version', '",
                       kSqliteStoreSchemaVersion, "')");
      return SqliteExec(db, path, insert.c_str(), "write schema_version");
    }
    int version = 0;
    if (!absl::SimpleAtoi(*version_text, &version) || version < 1) {
      return absl::DataLossError(absl::StrCat("sqlite store ", path, ": schema_version '",
                                              *version_text, "' in table meta is not a version"));
    }
    if (version > kSqliteStoreSchemaVersion) {
      return absl::FailedPreconditionError(
          absl::StrCat("sqlite store ", path, ": schema_version ", version,
                       " is newer than this tracker understands (", kSqliteStoreSchemaVersion,
                       "); run a newer TuneFleet or use another store file"));
    }
    if (version < kSqliteStoreSchemaVersion) {
      TF_RETURN_IF_ERROR(Migrate(db, path, version));
      const std::string update = absl::StrCat(
          "UPDATE meta SET value = '", kSqliteStoreSchemaVersion, "' WHERE key = 'schema_version'");
      TF_RETURN_IF_ERROR(SqliteExec(db, path, update.c_str(), "write schema_version"));
      TF_LOG(INFO) << "sqlite store " << path << ": schema migrated from version " << version
                   << " to " << kSqliteStoreSchemaVersion;
    }
    return absl::OkStatus();
  };
  absl::Status status = check();
  if (status.ok()) return SqliteExec(db, path, "COMMIT", "commit schema");
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  return status;
}

}  // namespace tunefleet
