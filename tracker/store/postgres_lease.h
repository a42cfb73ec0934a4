// PostgresLeaderLease: which of several tracker replicas sharing one
// PostgreSQL store leads. The lease is a session-level advisory lock: held
// while this replica's lease session lives, released by the server the
// moment the session ends (the process died, or its host vanished and TCP
// keepalives gave up on it: a few seconds). Taking it bumps the epoch in
// the store's leader row; the leader's store writes carry that epoch
// (PostgresStoreOptions::fence_epoch), so a paused old leader that wakes up
// after a takeover cannot write.
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
  // How long a check (or an attempt) may wait for the database before the
  // lease counts as lost.
  absl::Duration check_timeout = absl::Seconds(5);
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
  // epoch), false when another one does. Unavailable when the session was
  // lost (Connect again).
  [[nodiscard]] absl::StatusOr<bool> TryAcquire();
  // The leader row as stored.
  [[nodiscard]] absl::StatusOr<LeaderInfo> Leader();
  // OK while this replica leads: its session answers within check_timeout
  // and the row still carries its epoch. Any error means the lease is lost.
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
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_POSTGRES_LEASE_H_
