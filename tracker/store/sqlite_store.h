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
// Damage. Opening refuses, with the file and the way out in the message: a
// 0-byte file (FailedPrecondition: not a store; a missing path still creates
// a new one), a file that is not a database, and one that fails SQLite's
// `PRAGMA quick_check` (DataLoss). One damaged job row (a spec that does not
// parse, a state out of range, a column of the wrong type) does not stop the
// rest: LoadJobs returns that job as FAILED with a message that starts with
// kDamagedRowMessage and names the row, logs it, and leaves the row as it
// was; a damaged trial row makes LoadTrials of its job fail with DataLoss
// naming the trial. CheckSqliteStore lists every such problem
// (`tunefleet_tracker --store_check`).
//
// Errors name the file, the operation and SQLite's message. One connection
// guarded by a mutex: calls from any thread are serialized.
#ifndef TUNEFLEET_TRACKER_STORE_SQLITE_STORE_H_
#define TUNEFLEET_TRACKER_STORE_SQLITE_STORE_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tracker/store/sqlite_schema.h"
#include "tracker/store/store.h"

namespace tunefleet {

struct SqliteStoreOptions {
  // false: synchronous=NORMAL (survives a killed process, not power loss).
  // true: synchronous=FULL (fsync on every commit; survives power loss).
  bool synchronous_full = false;
  // How long a write waits for another connection's lock before giving up.
  int busy_timeout_ms = 5000;
};

// Opens (creating if absent) the store at `path`. FailedPrecondition if the
// file is empty (0 bytes), is not a SQLite database, is not a TuneFleet
// store, or has a newer schema_version than kSqliteStoreSchemaVersion;
// DataLoss if it fails `PRAGMA quick_check`.
[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenSqliteStore(
    const std::string& path, SqliteStoreOptions options = {});

// What CheckSqliteStore found: counts and one line per problem.
struct SqliteStoreCheck {
  int64_t jobs = 0;
  int64_t trials = 0;
  std::vector<std::string> problems;  // empty: the store is sound
};

// Opens an existing store (NotFound if `path` does not exist; never creates
// one) and reads every row back as the tracker would: an error when it cannot
// be opened at all (as OpenSqliteStore), else each damaged job row, trial
// row or record line as a problem.
[[nodiscard]] absl::StatusOr<SqliteStoreCheck> CheckSqliteStore(const std::string& path);
// `tunefleet_tracker --store_check`: CheckSqliteStore's findings on `out`,
// one line per problem and a summary; returns the exit code (0: sound).
int RunSqliteStoreCheck(const std::string& path, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_SQLITE_STORE_H_
