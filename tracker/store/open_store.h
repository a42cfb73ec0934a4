// The tracker's store by its address: empty, in memory (tests); a
// "postgresql://" (or "postgres://") address, PostgreSQL (postgres_store.h);
// anything else, a SQLite file (sqlite_store.h). And `--store_migrate`: every
// job of one store copied into an empty other (store_copy.h).
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, OpenStore(flag, {}));
#ifndef TUNEFLEET_TRACKER_STORE_OPEN_STORE_H_
#define TUNEFLEET_TRACKER_STORE_OPEN_STORE_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "tracker/store/store.h"

namespace tunefleet {

struct OpenStoreOptions {
  bool sqlite_synchronous_full = true;  // SqliteStoreOptions::synchronous_full
  int64_t postgres_fence_epoch = 0;     // PostgresStoreOptions::fence_epoch
};

[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& address,
                                                               const OpenStoreOptions& options);

// What the log says of a store: the SQLite path, the PostgreSQL database
// without its password, or "in-memory store".
std::string DescribeStore(const std::string& address);

// `tunefleet_tracker --store=FROM --store_migrate=TO`: copies every job,
// trial and record of FROM into the empty store TO, printing the counts or
// the error on `out`; the exit code (0: copied). FROM is never changed (a
// SQLite file is opened, not created: a missing one is an error).
int RunStoreMigrate(const std::string& from, const std::string& to, std::ostream& out);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_OPEN_STORE_H_
