// The PostgreSQL store's schema and its versions: tables created in a new
// database, the version of an existing one checked, older versions migrated
// in place, all in one transaction under an advisory lock, so replicas that
// start together migrate once. Used by the PostgreSQL store and the leader
// lease (which keeps its epoch in the schema's leader row).
//
// Tables (names prefixed, so the database may hold other things):
//   tunefleet_meta    key/value: schema_version
//   tunefleet_jobs    one row per job (spec: serialized proto::JobSpec)
//   tunefleet_trials  one row per (job, trial) (result: proto::TrialResult)
//   tunefleet_leader  one row: the leader's epoch, holder and lease
#ifndef TUNEFLEET_TRACKER_STORE_POSTGRES_SCHEMA_H_
#define TUNEFLEET_TRACKER_STORE_POSTGRES_SCHEMA_H_

#include "absl/status/status.h"
#include "tracker/store/postgres_connection.h"

namespace tunefleet {

// The schema this build writes and the newest one it can read.
inline constexpr int kPostgresStoreSchemaVersion = 1;

// Creates the schema in a database without one, migrates an older version;
// FailedPrecondition for a newer version or a database whose tunefleet_
// tables are not a TuneFleet store's.
[[nodiscard]] absl::Status EnsurePostgresSchema(PgConnection& db);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_POSTGRES_SCHEMA_H_
