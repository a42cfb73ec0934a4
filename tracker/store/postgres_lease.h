// PostgresLeaderLease: which of several tracker replicas sharing one
// PostgreSQL store leads. The lease is the store's leader row: an epoch, the
// holder's address, a deadline (`lease_until`, the database's clock) and the
// database session the holder renews it from.
//
//   * A standby takes the lease, bumping the epoch, when there is no leader
//     yet, when the lease ran out (its holder stopped renewing: paused,
//     partitioned, hung), or at once when the holder's session is gone (its
//     process died: the server ends the session, and the row names it).
//     One UPDATE does the check and the take, so two standbys never both win.
//   * The leader renews every check (lease_until = now() + ttl, only while
//     the row carries its epoch) and counts the lease as lost the moment a
//     renewal fails or when `ttl` has passed, on its own monotonic clock,
//     since the start of its last successful renewal: a leader that was
//     paused past its lease knows it on waking, before it serves again.
//   * Fencing: the leader's store writes carry its epoch
//     (PostgresStoreOptions::fence_epoch) and are refused once another
//     replica took the lease, so a paused old leader that wakes up cannot
//     write even before it notices.
//
//   TF_ASSIGN_OR_RETURN(auto lease, PostgresLeaderLease::Connect(address, {.holder = "a:7070"}));
//   while (!*lease->TryAcquire()) Sleep(1s);      // standby
//   ... OpenPostgresStore(address, {.fence_epoch = lease->epoch()}) ...
//   while (lease->Check().ok()) Sleep(1s);        // leader; on error: stop at once
//
// The session is never reopened behind the caller's back: a lost session is
// a lost lease. Not thread-safe.
#ifndef TUNEFLEET_TRACKER_STORE_POSTGRES_LEASE_H_
#define TUNEFLEET_TRACKER_STORE_POSTGRES_LEASE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tracker/store/postgres_connection.h"

namespace tunefleet {

// The application_name of lease sessions (pg_stat_activity).
inline constexpr char kLeaseApplicationName[] = "tunefleet-leader-lease";

struct LeaderLeaseOptions {
  // What standbys tell clients about this replica when it leads: the
  // address workers and clients reach it at ("tracker-0.tracker:7070").
  std::string holder;
  // How long a lease lasts unless renewed; the leader renews it far more
  // often (every check), and a standby takes over a holder that stopped
  // renewing after this long.
  absl::Duration ttl = absl::Seconds(5);
  // How long one database call of the lease may take.
  absl::Duration call_timeout = absl::Seconds(2);
};

// The leader row: the newest epoch and who took it.
struct LeaderInfo {
  int64_t epoch = 0;   // 0: no tracker has led yet
  std::string holder;  // empty while epoch is 0
};

class PostgresLeaderLease {
 public:
  // Opens the lease session (and creates or migrates the store's schema).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresLeaderLease>> Connect(
      const std::string& address, LeaderLeaseOptions options);

  // One attempt: true when this replica now leads (epoch() is its new
  // epoch), false when another one holds a live lease. Unavailable when the
  // session was lost (Connect again).
  [[nodiscard]] absl::StatusOr<bool> TryAcquire();
  // The leader row as stored.
  [[nodiscard]] absl::StatusOr<LeaderInfo> Leader();
  // The leader's renewal: OK while this replica leads (the row still
  // carries its epoch and the lease was renewed, within ttl of the last
  // renewal). Any error means the lease is lost, for good.
  [[nodiscard]] absl::Status Check();

  bool held() const { return epoch_ > 0; }
  int64_t epoch() const { return epoch_; }
  const std::string& description() const { return db_->description(); }

 private:
  PostgresLeaderLease(std::unique_ptr<PgConnection> db, LeaderLeaseOptions options)
      : db_(std::move(db)), options_(std::move(options)) {}

  std::unique_ptr<PgConnection> db_;
  const LeaderLeaseOptions options_;
  int64_t epoch_ = 0;
  bool lost_ = false;
  // When the last successful renewal (or the take) started: the lease is
  // this replica's until this + ttl, whatever the database says later.
  std::chrono::steady_clock::time_point renewed_from_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_POSTGRES_LEASE_H_
