#include "tracker/store/postgres_schema.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

// Serializes schema changes between replicas (pg_advisory_xact_lock's key:
// "TFSCHEMA" in ASCII).
constexpr int64_t kSchemaLockKey = 0x5446534348454D41;

// Version 1. Later versions append migrations to kMigrations; never edit
// this. Text that may hold any bytes (messages, configs, record lines) is
// bytea, so nothing a worker sends can make a write fail on its encoding;
// job ids sort bytewise (COLLATE "C"), as SQLite's do.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE tunefleet_meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE tunefleet_jobs (
  job_id      TEXT COLLATE "C" PRIMARY KEY,
  sequence    BIGINT NOT NULL,
  spec        BYTEA NOT NULL,             -- proto::JobSpec
  state       INTEGER NOT NULL,           -- proto::JobState
  message     BYTEA NOT NULL,
  created_at  DOUBLE PRECISION NOT NULL,  -- unix seconds
  started_at  DOUBLE PRECISION NOT NULL,
  finished_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX tunefleet_jobs_by_sequence ON tunefleet_jobs (sequence, job_id);
CREATE TABLE tunefleet_trials (
  job_id          TEXT COLLATE "C" NOT NULL REFERENCES tunefleet_jobs (job_id),
  trial_id        BIGINT NOT NULL,
  config_json     BYTEA NOT NULL,
  config_index    BIGINT NOT NULL,
  attempts        INTEGER NOT NULL,
  done            BOOLEAN NOT NULL,
  result          BYTEA NOT NULL,  -- proto::TrialResult
  record_line     BYTEA NOT NULL,
  task_index      INTEGER NOT NULL,
  validates       BIGINT NOT NULL,
  validation_pass INTEGER NOT NULL,
  PRIMARY KEY (job_id, trial_id)
);
-- The leader lease (postgres_lease.h): who leads, since which epoch, until
-- when unless renewed, and the database session it holds the lease from.
CREATE TABLE tunefleet_leader (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  epoch          BIGINT NOT NULL,
  holder         TEXT NOT NULL,
  since          TIMESTAMPTZ,
  lease_until    TIMESTAMPTZ,
  holder_pid     INTEGER,
  holder_started TIMESTAMPTZ
);
INSERT INTO tunefleet_leader (id, epoch, holder) VALUES (1, 0, '');
-- The fence every write of a leader runs first, in the write's transaction:
-- it holds the leader row FOR SHARE (a takeover waits for the write, or the
-- write for the takeover) and fails with SQLSTATE TF001 when the epoch is no
-- longer the writer's, so a replaced leader writes nothing.
CREATE FUNCTION tunefleet_fence(expected BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
  current BIGINT;
BEGIN
  SELECT epoch INTO current FROM tunefleet_leader WHERE id = 1 FOR SHARE;
  IF current IS DISTINCT FROM expected THEN
    RAISE EXCEPTION 'this tracker led at epoch %, the store is at epoch %: another tracker took over; nothing written, this one must stop', expected, current
      USING ERRCODE = 'TF001';
  END IF;
  RETURN current;
END
$$;
)sql";

struct Migration {
  int to_version;
  const char* sql;
};
constexpr Migration kMigrations[] = {{1, kSchemaV1}};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kPostgresStoreSchemaVersion,
              "one migration per schema version");

}  // namespace

[[nodiscard]] absl::Status EnsurePostgresSchema(PgConnection& db) {
  return db.InTransaction("schema", [&]() -> absl::Status {
    PgParams key;
    key.Int8(kSchemaLockKey);
    TF_RETURN_IF_ERROR(db.Exec("SELECT pg_advisory_xact_lock($1)", key, "schema: lock").status());
    TF_ASSIGN_OR_RETURN(PgResult tables,
                        db.Exec("SELECT to_regclass('tunefleet_meta') IS NOT NULL, "
                                "to_regclass('tunefleet_jobs') IS NOT NULL",
                                PgParams(), "schema: look for the tables"));
    PgRow found = tables.Row(0, db.description() + ": schema");
    const bool has_meta = found.Bool(0);
    const bool has_jobs = found.Bool(1);
    TF_RETURN_IF_ERROR(found.status());
    int version = 0;
    if (has_meta) {
      TF_ASSIGN_OR_RETURN(PgResult meta,
                          db.Exec("SELECT value FROM tunefleet_meta WHERE key = 'schema_version'",
                                  PgParams(), "schema: read the version"));
      std::string text;
      if (meta.rows() == 1) {
        PgRow row = meta.Row(0, db.description() + ": schema_version");
        text = row.Text(0);
        TF_RETURN_IF_ERROR(row.status());
      }
      if (!absl::SimpleAtoi(text, &version) || version < 1) {
        return absl::FailedPreconditionError(
            absl::StrCat(db.description(), ": tunefleet_meta holds no valid schema_version ('",
                         text, "'): not a TuneFleet store, or a damaged one"));
      }
    } else if (has_jobs) {
      return absl::FailedPreconditionError(absl::StrCat(
          db.description(),
          ": has a tunefleet_jobs table but no tunefleet_meta: not a TuneFleet store"));
    }
    if (version > kPostgresStoreSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          db.description(), ": store schema version ", version, " is newer than this build's (",
          kPostgresStoreSchemaVersion, "): run the TuneFleet that wrote it, or a newer one"));
    }
    for (const Migration& migration : kMigrations) {
      if (migration.to_version <= version) continue;
      TF_RETURN_IF_ERROR(
          db.Run(migration.sql, absl::StrCat("schema: migrate to version ", migration.to_version)));
      TF_LOG(INFO) << db.description() << ": store schema now at version " << migration.to_version;
    }
    if (version < kPostgresStoreSchemaVersion) {
      PgParams value;
      value.Text(absl::StrCat(kPostgresStoreSchemaVersion));
      TF_RETURN_IF_ERROR(
          db.Exec("INSERT INTO tunefleet_meta (key, value) VALUES ('schema_version', $1) "
                  "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                  value, "schema: write the version")
              .status());
    }
    return absl::OkStatus();
  });
}

}  // namespace tunefleet
