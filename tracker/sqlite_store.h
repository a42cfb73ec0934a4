// OpenSqliteStore: the tracker's default Store, one SQLite database file in WAL
// mode. Specs and results are stored as serialized protos (BLOB), record lines
// as TEXT; every call is one transaction.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
//                       OpenSqliteStore("/var/lib/tunefleet/tracker.db"));
//
// Durability: by default (WAL, synchronous=NORMAL) a call that returned OK
// survives kill -9 of the tracker; the last commits may be lost if the machine
// loses power. `synchronous_full` makes every commit wait for fsync, which
// survives power loss at the cost of a disk flush per call.
//
// The file carries a schema version (table `meta`, key `schema_version`); a
// file written by a newer TuneFleet is refused with FailedPrecondition rather
// than misread. Other connections (another process reading the store, or a
// second OpenSqliteStore on the same path) may be open at the same time;
// writers wait up to `busy_timeout_ms` for each other, then get Unavailable.
//
// Errors name the file, the operation and SQLite's message. One connection
// guarded by a mutex: calls from any thread are serialized.
#ifndef TUNEFLEET_TRACKER_SQLITE_STORE_H_
#define TUNEFLEET_TRACKER_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tracker/sqlite_schema.h"
#include "tracker/store.h"

namespace tunefleet {

struct SqliteStoreOptions {
  // false: synchronous=NORMAL (survives a killed process, not power loss).
  // true: synchronous=FULL (fsync on every commit; survives power loss).
  bool synchronous_full = false;
  // How long a write waits for another connection's lock before giving up.
  int busy_timeout_ms = 5000;
};

// Opens (creating if absent) the store at `path`. FailedPrecondition if the
// file is not a SQLite database, is not a TuneFleet store, or has a newer
// schema_version than kSqliteStoreSchemaVersion.
[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(
    const std::string& path, SqliteStoreOptions options = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_SQLITE_STORE_H_
