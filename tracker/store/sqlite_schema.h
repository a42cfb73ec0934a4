// The SQLite store's schema and its versions: creating it in a new file,
// checking the version of an existing one and migrating older versions in
// place (version 1 -> 2: trials name their task, for model jobs; 2 -> 3:
// validation measurements, the trial they validate and their pass). Used by
// sqlite_store.cc only; the store's users see kSqliteStoreSchemaVersion.
#ifndef TUNEFLEET_TRACKER_STORE_SQLITE_SCHEMA_H_
#define TUNEFLEET_TRACKER_STORE_SQLITE_SCHEMA_H_

#include <sqlite3.h>

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tunefleet {

// The schema this build writes and the newest one it can read.
inline constexpr int kSqliteStoreSchemaVersion = 3;

// The status code for an SQLite result code (busy/locked/I/O: Unavailable,
// full: ResourceExhausted, corrupt: DataLoss, ...).
absl::StatusCode SqliteCode(int rc);

// Runs SQL that returns no rows (or whose rows do not matter); errors name
// `path` and `operation`.
[[nodiscard]] absl::Status SqliteExec(sqlite3* db, const std::string& path, const char* sql,
                                      absl::string_view operation);

// The single text value `sql` returns; an empty optional for no row.
[[nodiscard]] absl::StatusOr<std::optional<std::string>> SqliteQueryText(
    sqlite3* db, const std::string& path, const char* sql, absl::string_view operation);

// Creates the schema in a new database, migrates an older version, refuses
// a newer one or a database that is not a TuneFleet store
// (FailedPrecondition), all in one transaction.
[[nodiscard]] absl::Status InitSqliteSchema(sqlite3* db, const std::string& path);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_SQLITE_SCHEMA_H_
