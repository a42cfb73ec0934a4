#include "tracker/store/postgres_lease.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tracker/store/postgres_schema.h"

namespace tunefleet {
namespace {

// pg_try_advisory_lock's key: "TFLEADER" in ASCII.
constexpr int64_t kLeaderLockKey = 0x54464C4541444552;

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresLeaderLease>> PostgresLeaderLease::Connect(
    const std::string& address, LeaderLeaseOptions options) {
  PgConnectionOptions connection;
  connection.call_timeout = options.check_timeout;
  connection.reconnect = false;  // the lock lives and dies with the session
  TF_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db, PgConnection::Open(address, connection));
  TF_RETURN_IF_ERROR(EnsurePostgresSchema(*db));
  // The server drops a vanished leader's session (and so its lock) within
  // about 5 s instead of the kernel's default of hours; on a Unix socket
  // these are ignored.
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
  PgParams key;
  key.Int8(kLeaderLockKey);
  TF_ASSIGN_OR_RETURN(PgResult locked,
                      db_->Exec("SELECT pg_try_advisory_lock($1)", key, "lease: try the lock"));
  PgRow row = locked.Row(0, db_->description() + ": lease");
  const bool got = row.Bool(0);
  TF_RETURN_IF_ERROR(row.status());
  if (!got) return false;
  // Waits for a write of the old leader that holds the row FOR SHARE; every
  // later write of the old leader then sees the new epoch and fails.
  PgParams holder;
  holder.Text(options_.holder);
  absl::StatusOr<PgResult> bumped = db_->Exec(
      "UPDATE tunefleet_leader SET epoch = epoch + 1, holder = $1, since = now() "
      "WHERE id = 1 RETURNING epoch",
      holder, "lease: take the next epoch");
  int64_t epoch = 0;
  absl::Status status = bumped.status();
  if (status.ok() && bumped->rows() != 1) {
    status = absl::DataLossError(db_->description() + ": the leader row is missing");
  }
  if (status.ok()) {
    PgRow next = bumped->Row(0, db_->description() + ": leader row");
    epoch = next.Int8(0);
    status = next.status();
  }
  if (!status.ok()) {
    absl::Status ignored =
        db_->Exec("SELECT pg_advisory_unlock($1)", key, "lease: unlock").status();
    (void)ignored;
    return status;
  }
  epoch_ = epoch;
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
  TF_ASSIGN_OR_RETURN(LeaderInfo leader, Leader());
  if (leader.epoch != epoch_) {
    return absl::FailedPreconditionError(
        absl::StrCat(db_->description(), ": lease lost: this replica led at epoch ", epoch_,
                     ", the store is at epoch ", leader.epoch, " (", leader.holder, ")"));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
