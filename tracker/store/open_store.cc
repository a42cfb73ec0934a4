#include "tracker/store/open_store.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tracker/store/memory_store.h"
#include "tracker/store/postgres_connection.h"
#include "tracker/store/postgres_store.h"
#include "tracker/store/sqlite_store.h"
#include "tracker/store/store_copy.h"

namespace tunefleet {

[[nodiscard]] absl::StatusOr<std::unique_ptr<Store>> OpenStore(const std::string& address,
                                                               const OpenStoreOptions& options) {
  if (address.empty()) return std::unique_ptr<Store>(std::make_unique<MemoryStore>());
  if (IsPostgresAddress(address)) {
    PostgresStoreOptions postgres;
    postgres.fence_epoch = options.postgres_fence_epoch;
    return OpenPostgresStore(address, postgres);
  }
  SqliteStoreOptions sqlite;
  sqlite.synchronous_full = options.sqlite_synchronous_full;
  return OpenSqliteStore(address, sqlite);
}

std::string DescribeStore(const std::string& address) {
  if (address.empty()) return "in-memory store";
  if (IsPostgresAddress(address)) return "store " + DescribePostgresAddress(address);
  return "store " + address;
}

int RunStoreMigrate(const std::string& from, const std::string& to, std::ostream& out) {
  struct stat st;
  if (from.empty() || (!IsPostgresAddress(from) && stat(from.c_str(), &st) != 0)) {
    out << "store_migrate: no store at --store=" << from << " to copy from\n";
    return 1;
  }
  if (to.empty() || to == from) {
    out << "store_migrate: --store_migrate must name another store\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Store>> source = OpenStore(from, {});
  if (!source.ok()) {
    out << "store_migrate: " << DescribeStore(from) << ": " << source.status() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Store>> target = OpenStore(to, {});
  if (!target.ok()) {
    out << "store_migrate: " << DescribeStore(to) << ": " << target.status() << "\n";
    return 1;
  }
  absl::StatusOr<StoreCopy> copied = CopyStore(**source, **target);
  if (!copied.ok()) {
    out << "store_migrate: " << copied.status()
        << "\nstore_migrate: nothing was removed from the source; empty the target and run "
           "it again\n";
    return 1;
  }
  out << "store_migrate: copied " << copied->jobs << " job(s) and " << copied->trials
      << " trial(s) from " << DescribeStore(from) << " to " << DescribeStore(to);
  if (copied->damaged_jobs > 0) {
    out << "; " << copied->damaged_jobs
        << " job(s) had damaged rows and were copied as FAILED, naming the damage";
  }
  out << "\n";
  return 0;
}

}  // namespace tunefleet
