// One libpq connection to PostgreSQL with errors as values: typed parameters
// and typed reads of binary results, every call bounded by a deadline, and
// errors that name the database (never its password), the operation and the
// server's message. Used by the PostgreSQL store and the leader lease.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> db,
//                       PgConnection::Open("postgresql://tracker@db/tunefleet", {}));
//   PgParams params;
//   params.Text(job_id).Int8(sequence);
//   TF_ASSIGN_OR_RETURN(PgResult rows, db->Exec("SELECT ... WHERE job_id = $1", params, "load"));
//   PgRow row = rows.Row(0, "job 'a'");
//   int64_t n = row.Int8(0);
//   TF_RETURN_IF_ERROR(row.status());
//
// The connection string is libpq's (a `postgresql://` URI or `key=value`
// pairs): the password comes from the URI, `PGPASSWORD` or a password file
// (`passfile=` or `PGPASSFILE`), TLS from `sslmode=verify-full` and
// `sslrootcert=`. TCP keepalives and a TCP user timeout are on unless the
// string sets them, so a database host that vanishes fails calls within
// seconds instead of hanging them.
//
// Not thread-safe: callers serialize (the store holds a mutex around it).
#ifndef TUNEFLEET_TRACKER_STORE_POSTGRES_CONNECTION_H_
#define TUNEFLEET_TRACKER_STORE_POSTGRES_CONNECTION_H_

#include <postgresql/libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tunefleet {

// The SQLSTATE the store's fence raises for a write of a replaced leader
// (tunefleet_fence, postgres_schema.cc): FailedPrecondition.
inline constexpr char kFencedSqlState[] = "TF001";

// True for a store address that names a PostgreSQL database
// ("postgresql://..." or "postgres://...").
bool IsPostgresAddress(absl::string_view store);

// "postgresql <user>@<host>:<port>/<db>" for a connection string, for
// messages and logs; never its password. Best effort for strings libpq
// cannot parse ("postgresql store (unparseable address)").
std::string DescribePostgresAddress(const std::string& conninfo);

// Query parameters, sent in binary with their types declared.
class PgParams {
 public:
  PgParams& Text(absl::string_view text);
  PgParams& Bytes(absl::string_view bytes);
  PgParams& Int8(int64_t value);
  PgParams& Int4(int32_t value);
  PgParams& Float8(double value);
  PgParams& Bool(bool value);

  int size() const { return static_cast<int>(values_.size()); }
  const unsigned int* types() const { return types_.data(); }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }
  // Pointers into values_: valid until the next Add.
  std::vector<const char*> pointers() const;

 private:
  PgParams& Add(unsigned int type, std::string value);
  std::vector<std::string> values_;
  std::vector<unsigned int> types_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
};

struct PgResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};

// Reads one row of a binary result, checking each column's type and size,
// so a column of an unexpected type is reported rather than misread. The
// first problem is kept in status() (DataLoss naming `what` and the column).
class PgRow {
 public:
  PgRow(const PGresult* result, int row, std::string what)
      : result_(result), row_(row), what_(std::move(what)) {}

  std::string Text(int column);
  absl::string_view Bytes(int column);
  int64_t Int8(int column);
  int32_t Int4(int column);
  double Float8(int column);
  bool Bool(int column);
  template <typename Message>
  void Proto(int column, Message* message) {
    absl::string_view bytes = Bytes(column);
    if (status_.ok() && !message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      Fail(column, std::string("a serialized ") + std::string(message->GetTypeName()));
    }
  }
  [[nodiscard]] absl::Status status() const { return status_; }

 private:
  // The column's value when it has `type` and (when size >= 0) `size` bytes.
  const char* Value(int column, unsigned int type, int size, absl::string_view expected);
  void Fail(int column, absl::string_view expected);

  const PGresult* result_;
  int row_;
  std::string what_;
  absl::Status status_;
};

class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result) {}
  int rows() const { return PQntuples(result_.get()); }
  // The command tag ("COMMIT", "ROLLBACK", "INSERT 0 1", ...).
  std::string command() const { return PQcmdStatus(result_.get()); }
  PgRow Row(int row, std::string what) const { return PgRow(result_.get(), row, std::move(what)); }

 private:
  std::unique_ptr<PGresult, PgResultDeleter> result_;
};

// One statement of PgConnection::Atomically; `what` names it in errors.
struct PgStatement {
  const char* sql;
  PgParams params;
  std::string what;
};

struct PgConnectionOptions {
  // How long one call may take before it fails DeadlineExceeded (the
  // connection is then dropped and opened again by the next call).
  absl::Duration call_timeout = absl::Seconds(30);
  // Reconnect before a call when the connection was lost. Off for a
  // connection whose session state matters (the leader lease's lock).
  bool reconnect = true;
};

class PgConnection {
 public:
  // Connects (Unavailable with libpq's message when it cannot, naming the
  // database; PermissionDenied for a refused login).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PgConnection>> Open(
      const std::string& conninfo, PgConnectionOptions options);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement with binary parameters and binary results. Errors
  // carry a code from the SQLSTATE (connection lost: Unavailable; a
  // unique or foreign key violated: FailedPrecondition; ...) and name
  // `operation`.
  [[nodiscard]] absl::StatusOr<PgResult> Exec(const char* sql, const PgParams& params,
                                              absl::string_view operation);
  // Runs SQL without parameters or results worth reading (several
  // statements allowed: schema changes, BEGIN, COMMIT).
  [[nodiscard]] absl::Status Run(const char* sql, absl::string_view operation);

  // Runs `statements` as one transaction in one round trip (libpq's pipeline
  // mode: the statements up to the sync point are one implicit transaction,
  // committed at it): all take effect or none, OK only after the commit.
  // On failure, the first failing statement's error, naming its `what`.
  [[nodiscard]] absl::StatusOr<std::vector<PgResult>> Atomically(
      absl::string_view operation, const std::vector<PgStatement>& statements);

  // Runs `body` (returning absl::Status) between BEGIN and COMMIT; rolls
  // back when it fails. OK only when the COMMIT succeeded. A connection lost
  // inside is not reopened until the transaction is over: its statements
  // would run outside it.
  template <typename Body>
  [[nodiscard]] absl::Status InTransaction(absl::string_view operation, Body body) {
    absl::Status status = Run("BEGIN", operation);
    in_transaction_ = status.ok();
    if (status.ok()) status = body();
    if (status.ok()) status = Commit(operation);
    in_transaction_ = false;
    if (!status.ok()) RollbackIfOpen();
    return status;
  }

  // "postgresql <user>@<host>:<port>/<db>".
  const std::string& description() const { return description_; }

 private:
  PgConnection(std::string conninfo, std::string description, PgConnectionOptions options,
               PGconn* conn)
      : conninfo_(std::move(conninfo)),
        description_(std::move(description)),
        options_(options),
        conn_(conn) {}
  // A new connection: Unavailable with libpq's message when there is none,
  // PermissionDenied for a refused login; both name `description` and
  // `operation`.
  [[nodiscard]] static absl::StatusOr<PGconn*> Connect(const std::string& conninfo,
                                                       const std::string& description,
                                                       absl::string_view operation);
  bool alive() const;
  // Before a call: the connection, reopened when it was lost (where allowed).
  [[nodiscard]] absl::Status EnsureConnected(absl::string_view operation);
  // The next result of what was sent (null: the end of one query's
  // results), waiting until `deadline`; the connection is dropped when the
  // server does not answer by then.
  [[nodiscard]] absl::StatusOr<PGresult*> NextResult(absl::Time deadline,
                                                     absl::string_view operation);
  // Waits (up to the call timeout) for the result of a sent query.
  [[nodiscard]] absl::StatusOr<PgResult> Finish(bool sent, absl::string_view operation);
  [[nodiscard]] absl::Status ErrorOf(const PGresult* result, absl::string_view operation) const;
  [[nodiscard]] absl::Status Commit(absl::string_view operation);
  void RollbackIfOpen();
  // Atomically's statements prepared on this connection (SQL -> name),
  // so the server parses and plans each once per connection, not once per
  // write. A Parse that succeeded holds even when its transaction rolls
  // back; a new connection starts with none.
  absl::flat_hash_map<std::string, std::string> prepared_;
  int64_t next_prepared_ = 0;  // names "tf_<n>", never reused
  [[nodiscard]] absl::Status Error(absl::StatusCode code, absl::string_view operation,
                                   absl::string_view message) const;

  const std::string conninfo_;
  const std::string description_;
  const PgConnectionOptions options_;
  PGconn* conn_;
  bool in_transaction_ = false;  // inside InTransaction's BEGIN ... COMMIT
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_POSTGRES_CONNECTION_H_
