// OpenPostgresStore: the tracker's Store in a PostgreSQL database, for
// tracker replicas on a cluster that share one replicated database (one
// leader writes, standbys wait: tracker/replica.h). Same contract as the
// SQLite store (store.h): every call is one transaction, acknowledged only
// after its COMMIT; specs and results are serialized protos.
//
//   PostgresStoreOptions options;
//   options.fence_epoch = lease->epoch();  // tracker/store/postgres_lease.h
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<Store> store,
//                       OpenPostgresStore("postgresql://tracker@db/tunefleet", options));
//
// The address is libpq's (postgresql_connection.h: password from the URI,
// PGPASSWORD or a password file; TLS with sslmode=verify-full). The schema
// is created or migrated at open (postgres_schema.h); a newer one is refused.
//
// Every write is one transaction in one round trip to the server (libpq's
// pipeline mode), acknowledged after its commit.
//
// Fencing. With a fence_epoch, every write first checks the leader row's
// epoch in its own transaction (FOR SHARE, so a takeover waits for it or it
// for the takeover) and writes nothing, FailedPrecondition, when the epoch
// is no longer this tracker's: a paused old leader cannot write after a new
// one took over.
//
// Damage is reported as the SQLite store reports it: a job row whose spec
// does not parse or whose state is out of range loads as a FAILED job whose
// message starts with kDamagedRowMessage; a damaged trial row makes
// LoadTrials fail with DataLoss naming it.
//
// One connection guarded by a mutex (calls from any thread are serialized);
// a lost connection is opened again by the next call, and a call that fails
// on the way is not acknowledged.
#ifndef TUNEFLEET_TRACKER_STORE_POSTGRES_STORE_H_
#define TUNEFLEET_TRACKER_STORE_POSTGRES_STORE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tracker/store/store.h"

namespace tunefleet {

struct PostgresStoreOptions {
  // > 0: writes succeed only while the leader row's epoch is this one.
  int64_t fence_epoch = 0;
  // How long one call may wait for the database.
  absl::Duration call_timeout = absl::Seconds(30);
};

// Connects, creates or migrates the schema. Unavailable when the database
// cannot be reached, PermissionDenied for a refused login,
// FailedPrecondition for a newer schema or a database that is not a store.
[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenPostgresStore(
    const std::string& address, PostgresStoreOptions options = {});

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_POSTGRES_STORE_H_
