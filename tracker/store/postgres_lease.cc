#include "tracker/store/postgres_lease.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tracker/store/postgres_schema.h"

namespace tunefleet {

absl::StatusOr<std::unique_ptr<PostgresLeaderLease>> PostgresLeaderLease::Connect(
    const std::string& address, LeaderLeaseOptions options) {
  if (options.ttl < absl::Seconds(1) || options.call_timeout >= options.ttl) {
    return absl::InvalidArgumentError(absl::StrCat("lease: ttl ", absl::FormatDuration(options.ttl),
                                                   " must be at least 1 s and longer than a call (",
                                                   absl::FormatDuration(options.call_timeout),
                                                   ")"));
  }
  PgConnectionOptions connection;
  connection.call_timeout = options.call_timeout;
  connection.reconnect = false;  // the lease's session is what a standby checks
  TF_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Open(address, connection));
  TF_RETURN_IF_ERROR(EnsurePostgresSchema(*db));
  // The server drops a vanished replica's session within about 5 s instead
  // of the kernel's default of hours (ignored on a Unix socket).
  TF_RETURN_IF_ERROR(db->Run(absl::StrCat("SET application_name = '", kLeaseApplicationName,
                                          "'; SET tcp_keepalives_idle = 2; "
                                          "SET tcp_keepalives_interval = 1; "
                                          "SET tcp_keepalives_count = 2; "
                                          "SET tcp_user_timeout = 5000")
                                 .c_str(),
                             "lease: session settings"));
  return std::unique_ptr<PostgresLeaderLease>(
      new PostgresLeaderLease(std::move(db), std::move(options)));
}

absl::StatusOr<bool> PostgresLeaderLease::TryAcquire() {
  if (held()) return true;
  if (lost_) return absl::FailedPreconditionError("lease: lost; connect again");
  const auto started = std::chrono::steady_clock::now();
  PgParams params;
  params.Text(options_.holder).Float8(absl::ToDoubleSeconds(options_.ttl));
  // One statement, under the row's lock: a leader's writes hold the row FOR
  // SHARE, so the take waits for a write in progress, and every later write
  // of the old leader sees the new epoch and fails.
  TF_ASSIGN_OR_RETURN(
      PgResult taken,
      db_->Exec("UPDATE tunefleet_leader AS l SET epoch = l.epoch + 1, holder = $1, "
                "since = now(), lease_until = now() + make_interval(secs => $2), "
                "holder_pid = pg_backend_pid(), "
                "holder_started = (SELECT backend_start FROM pg_stat_activity "
                "                  WHERE pid = pg_backend_pid()) "
                "WHERE l.id = 1 AND (l.epoch = 0 OR l.lease_until IS NULL "
                "  OR l.lease_until < now() "
                "  OR NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a "
                "                 WHERE a.pid = l.holder_pid "
                "                   AND a.backend_start = l.holder_started)) "
                "RETURNING l.epoch",
                params, "lease: take it if free"));
  if (taken.rows() == 0) return false;
  PgRow row = taken.Row(0, db_->description() + ": leader row");
  const int64_t epoch = row.Int8(0);
  TF_RETURN_IF_ERROR(row.status());
  epoch_ = epoch;
  renewed_from_ = started;
  return true;
}

absl::StatusOr<LeaderInfo> PostgresLeaderLease::Leader() {
  TF_ASSIGN_OR_RETURN(PgResult rows,
                      db_->Exec("SELECT epoch, holder FROM tunefleet_leader WHERE id = 1",
                                PgParams(), "lease: read the leader row"));
  if (rows.rows() != 1)
    return absl::DataLossError(db_->description() + ": the leader row is missing");
  PgRow row = rows.Row(0, db_->description() + ": leader row");
  LeaderInfo info;
  info.epoch = row.Int8(0);
  info.holder = row.Text(1);
  TF_RETURN_IF_ERROR(row.status());
  return info;
}

absl::Status PostgresLeaderLease::Check() {
  if (!held()) return absl::FailedPreconditionError("lease: not the leader");
  if (lost_) return absl::FailedPreconditionError("lease: lost");
  // Paused past the lease (SIGSTOP, a stalled VM): another replica may lead
  // already, whatever a renewal would now say.
  const absl::Duration since = absl::FromChrono(std::chrono::steady_clock::now() - renewed_from_);
  if (since >= options_.ttl) {
    lost_ = true;
    return absl::DeadlineExceededError(absl::StrCat(
        db_->description(), ": lease lost: its last renewal started ", absl::FormatDuration(since),
        " ago, past its ttl of ", absl::FormatDuration(options_.ttl)));
  }
  const auto started = std::chrono::steady_clock::now();
  PgParams params;
  params.Float8(absl::ToDoubleSeconds(options_.ttl)).Int8(epoch_);
  absl::StatusOr<PgResult> renewed = db_->Exec(
      "UPDATE tunefleet_leader SET lease_until = now() + make_interval(secs => $1) "
      "WHERE id = 1 AND epoch = $2 RETURNING epoch",
      params, "lease: renew");
  if (!renewed.ok()) {
    lost_ = true;
    return renewed.status();
  }
  if (renewed->rows() == 0) {
    lost_ = true;
    absl::StatusOr<LeaderInfo> leader = Leader();
    return absl::FailedPreconditionError(absl::StrCat(
        db_->description(), ": lease lost: this replica led at epoch ", epoch_,
        leader.ok()
            ? absl::StrCat(", the store is at epoch ", leader->epoch, " (", leader->holder, ")")
            : std::string(", and the leader row cannot be read")));
  }
  renewed_from_ = started;
  return absl::OkStatus();
}

}  // namespace tunefleet
