#include "tracker/store/postgres_connection.h"

#include <endian.h>
#include <poll.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

// PostgreSQL's built-in type OIDs (fixed by the server's catalog).
constexpr unsigned int kBoolOid = 16;
constexpr unsigned int kByteaOid = 17;
constexpr unsigned int kInt8Oid = 20;
constexpr unsigned int kInt4Oid = 23;
constexpr unsigned int kTextOid = 25;
constexpr unsigned int kFloat8Oid = 701;

// The status code for a SQLSTATE (PostgreSQL's error codes, appendix A).
absl::StatusCode CodeOfSqlState(absl::string_view state) {
  if (state.size() != 5) return absl::StatusCode::kUnavailable;  // no server answer
  const absl::string_view cls = state.substr(0, 2);
  if (cls == "08" || state == "57P01" || state == "57P02" || state == "57P03")
    return absl::StatusCode::kUnavailable;  // connection lost, server shutting down
  if (state == "57014") return absl::StatusCode::kDeadlineExceeded;  // canceled
  if (cls == "40" || state == "25P02") return absl::StatusCode::kAborted;
  if (cls == "53") return absl::StatusCode::kResourceExhausted;
  if (state == "23503") return absl::StatusCode::kNotFound;  // a row it refers to is missing
  if (cls == "23") return absl::StatusCode::kFailedPrecondition;
  if (state == kFencedSqlState) return absl::StatusCode::kFailedPrecondition;
  if (cls == "28" || state == "42501") return absl::StatusCode::kPermissionDenied;
  if (state == "3D000") return absl::StatusCode::kNotFound;
  if (cls == "22") return absl::StatusCode::kInvalidArgument;
  return absl::StatusCode::kInternal;
}

// Network byte order (PostgreSQL's binary format) to and from the host's.
std::string Big64(uint64_t host) {
  const uint64_t big = htobe64(host);
  return std::string(reinterpret_cast<const char*>(&big), sizeof(big));
}
uint64_t Host64(const char* value) {
  uint64_t big;
  std::memcpy(&big, value, sizeof(big));
  return be64toh(big);
}

std::string StripNewline(const char* message) {
  return std::string(absl::StripTrailingAsciiWhitespace(message == nullptr ? "" : message));
}

PGconn* ConnectTo(const std::string& conninfo) {
  // Later keywords override earlier ones, so the caller's string (dbname,
  // expanded) overrides these defaults.
  const char* const keywords[] = {"connect_timeout",  "keepalives",
                                  "keepalives_idle",  "keepalives_interval",
                                  "keepalives_count", "tcp_user_timeout",
                                  "client_encoding",  "application_name",
                                  "dbname",           nullptr};
  const char* const values[] = {
      "5", "1", "5", "2", "3", "10000", "UTF8", "tunefleet", conninfo.c_str(), nullptr};
  return PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
}

}  // namespace

bool IsPostgresAddress(absl::string_view store) {
  return absl::StartsWith(store, "postgresql://") || absl::StartsWith(store, "postgres://");
}

std::string DescribePostgresAddress(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return "postgresql store (unparseable address)";
  }
  std::string user, host, port, db;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const absl::string_view key = o->keyword;
    if (key == "user") user = o->val;
    if (key == "host" || (key == "hostaddr" && host.empty())) host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") db = o->val;
  }
  PQconninfoFree(options);
  return absl::StrCat("postgresql ", user.empty() ? "" : user + "@",
                      host.empty() ? "(local socket)" : host, port.empty() ? "" : ":" + port, "/",
                      db);
}

// ---------------------------------------------------------------- PgParams

PgParams& PgParams::Add(unsigned int type, std::string value) {
  types_.push_back(type);
  lengths_.push_back(static_cast<int>(value.size()));
  formats_.push_back(1);
  values_.push_back(std::move(value));
  return *this;
}

PgParams& PgParams::Text(absl::string_view text) { return Add(kTextOid, std::string(text)); }
PgParams& PgParams::Bytes(absl::string_view bytes) { return Add(kByteaOid, std::string(bytes)); }
PgParams& PgParams::Int8(int64_t value) {
  return Add(kInt8Oid, Big64(static_cast<uint64_t>(value)));
}
PgParams& PgParams::Int4(int32_t value) {
  const uint32_t big = htobe32(static_cast<uint32_t>(value));
  return Add(kInt4Oid, std::string(reinterpret_cast<const char*>(&big), sizeof(big)));
}
PgParams& PgParams::Float8(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return Add(kFloat8Oid, Big64(bits));
}
PgParams& PgParams::Bool(bool value) { return Add(kBoolOid, std::string(1, value ? 1 : 0)); }

std::vector<const char*> PgParams::pointers() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const std::string& v : values_) out.push_back(v.data());
  return out;
}

// ---------------------------------------------------------------- PgRow

void PgRow::Fail(int column, absl::string_view expected) {
  if (!status_.ok()) return;
  const char* name = column < PQnfields(result_) ? PQfname(result_, column) : "?";
  status_ = absl::DataLossError(absl::StrCat(what_, ": column '", name, "' is not ", expected));
}

const char* PgRow::Value(int column, unsigned int type, int size, absl::string_view expected) {
  if (column >= PQnfields(result_) || PQgetisnull(result_, row_, column) ||
      PQftype(result_, column) != type || PQfformat(result_, column) != 1 ||
      (size >= 0 && PQgetlength(result_, row_, column) != size)) {
    Fail(column, expected);
    return nullptr;
  }
  return PQgetvalue(result_, row_, column);
}

std::string PgRow::Text(int column) {
  const char* value = Value(column, kTextOid, -1, "text");
  return value == nullptr ? std::string() : std::string(value, PQgetlength(result_, row_, column));
}

absl::string_view PgRow::Bytes(int column) {
  const char* value = Value(column, kByteaOid, -1, "bytes (bytea)");
  return value == nullptr ? absl::string_view()
                          : absl::string_view(value, PQgetlength(result_, row_, column));
}

int64_t PgRow::Int8(int column) {
  const char* value = Value(column, kInt8Oid, 8, "a bigint");
  return value == nullptr ? 0 : static_cast<int64_t>(Host64(value));
}

int32_t PgRow::Int4(int column) {
  const char* value = Value(column, kInt4Oid, 4, "an integer");
  if (value == nullptr) return 0;
  uint32_t big;
  std::memcpy(&big, value, sizeof(big));
  return static_cast<int32_t>(be32toh(big));
}

double PgRow::Float8(int column) {
  const char* value = Value(column, kFloat8Oid, 8, "a double precision");
  if (value == nullptr) return 0;
  const uint64_t bits = Host64(value);
  double out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}

bool PgRow::Bool(int column) {
  const char* value = Value(column, kBoolOid, 1, "a boolean");
  return value != nullptr && value[0] != 0;
}

// ---------------------------------------------------------------- PgConnection

absl::StatusOr<PGconn*> PgConnection::Connect(const std::string& conninfo,
                                              const std::string& description,
                                              absl::string_view operation) {
  PGconn* conn = ConnectTo(conninfo);
  if (conn == nullptr) return absl::ResourceExhaustedError(description + ": out of memory");
  if (PQstatus(conn) == CONNECTION_OK) return conn;
  const std::string message = StripNewline(PQerrorMessage(conn));
  PQfinish(conn);
  const bool refused_login =
      absl::StrContains(message, "authentication failed") || absl::StrContains(message, "password");
  return absl::Status(
      refused_login ? absl::StatusCode::kPermissionDenied : absl::StatusCode::kUnavailable,
      absl::StrCat(description, ": ", operation, ": ", message));
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& conninfo,
                                                                 PgConnectionOptions options) {
  const std::string description = DescribePostgresAddress(conninfo);
  TF_ASSIGN_OR_RETURN(PGconn * conn, Connect(conninfo, description, "cannot connect"));
  return std::unique_ptr<PgConnection>(new PgConnection(conninfo, description, options, conn));
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

bool PgConnection::alive() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

absl::Status PgConnection::Error(absl::StatusCode code, absl::string_view operation,
                                 absl::string_view message) const {
  return absl::Status(code, absl::StrCat(description_, ": ", operation, ": ", message));
}

absl::Status PgConnection::EnsureConnected(absl::string_view operation) {
  if (alive()) return absl::OkStatus();
  if (!options_.reconnect || in_transaction_) {
    return Error(absl::StatusCode::kUnavailable, operation,
                 in_transaction_ ? "the connection was lost inside a transaction, which is lost "
                                   "with it"
                                 : "the connection was lost (and with it this session's state)");
  }
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  TF_ASSIGN_OR_RETURN(
      conn_, Connect(conninfo_, description_, absl::StrCat(operation, ": cannot reconnect")));
  prepared_.clear();  // they were the old connection's
  return absl::OkStatus();
}

absl::StatusOr<PGresult*> PgConnection::NextResult(absl::Time deadline,
                                                   absl::string_view operation) {
  const int fd = PQsocket(conn_);
  while (PQisBusy(conn_)) {
    const absl::Duration left = deadline - absl::Now();
    struct pollfd pfd = {fd, POLLIN, 0};
    const int ready =
        left <= absl::ZeroDuration() ? 0 : poll(&pfd, 1, absl::ToInt64Milliseconds(left) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      // The server did not answer in time: the connection's state is
      // unknown, so it is dropped (and, where allowed, opened again by the
      // next call). What the statement did is not acknowledged.
      PQfinish(conn_);
      conn_ = nullptr;
      return Error(absl::StatusCode::kDeadlineExceeded, operation,
                   absl::StrCat("no answer within ", absl::FormatDuration(options_.call_timeout),
                                "; the connection is dropped"));
    }
    if (!PQconsumeInput(conn_)) {
      return Error(absl::StatusCode::kUnavailable, operation,
                   absl::StrCat("connection lost: ", StripNewline(PQerrorMessage(conn_))));
    }
  }
  return PQgetResult(conn_);
}

absl::Status PgConnection::ErrorOf(const PGresult* result, absl::string_view operation) const {
  const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  return Error(CodeOfSqlState(state == nullptr ? "" : state), operation,
               absl::StrCat(StripNewline(PQresultErrorMessage(result)), " (SQLSTATE ",
                            state == nullptr ? "none" : state, ")"));
}

absl::StatusOr<PgResult> PgConnection::Finish(bool sent, absl::string_view operation) {
  if (!sent) {
    return Error(absl::StatusCode::kUnavailable, operation,
                 absl::StrCat("cannot send: ", StripNewline(PQerrorMessage(conn_))));
  }
  const absl::Time deadline = absl::Now() + options_.call_timeout;
  std::unique_ptr<PGresult, PgResultDeleter> last, error;
  for (;;) {
    TF_ASSIGN_OR_RETURN(PGresult * result, NextResult(deadline, operation));
    if (result == nullptr) break;
    const ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE) {
      if (error == nullptr)
        error.reset(result);
      else
        PQclear(result);
    } else {
      last.reset(result);
    }
  }
  if (error != nullptr) return ErrorOf(error.get(), operation);
  if (last == nullptr) {
    return Error(absl::StatusCode::kUnavailable, operation,
                 absl::StrCat("no result: ", StripNewline(PQerrorMessage(conn_))));
  }
  return PgResult(last.release());
}

absl::StatusOr<std::vector<PgResult>> PgConnection::Atomically(
    absl::string_view operation, const std::vector<PgStatement>& statements) {
  TF_RETURN_IF_ERROR(EnsureConnected(operation));
  if (PQenterPipelineMode(conn_) != 1) {
    return Error(absl::StatusCode::kInternal, operation,
                 absl::StrCat("cannot enter pipeline mode: ", StripNewline(PQerrorMessage(conn_))));
  }
  // The commands sent, in order: each statement, after its Parse where it
  // is not prepared on this connection yet (`preparing`: the Parse's SQL).
  struct Command {
    size_t statement;
    const char* preparing = nullptr;
    std::string name;
  };
  std::vector<Command> commands;
  absl::flat_hash_map<std::string, std::string> parsing;  // in this pipeline
  bool sent = true;
  for (size_t i = 0; i < statements.size(); ++i) {
    const PgStatement& statement = statements[i];
    std::string name;
    if (auto it = prepared_.find(statement.sql); it != prepared_.end()) {
      name = it->second;
    } else if (auto p = parsing.find(statement.sql); p != parsing.end()) {
      name = p->second;
    } else {
      name = absl::StrCat("tf_", next_prepared_++);
      parsing[statement.sql] = name;
      sent = sent && PQsendPrepare(conn_, name.c_str(), statement.sql, statement.params.size(),
                                   statement.params.types()) == 1;
      commands.push_back({i, statement.sql, name});
    }
    const std::vector<const char*> values = statement.params.pointers();
    sent = sent && PQsendQueryPrepared(conn_, name.c_str(), statement.params.size(), values.data(),
                                       statement.params.lengths(), statement.params.formats(),
                                       /*resultFormat=*/1) == 1;
    commands.push_back({i});
  }
  sent = sent && PQpipelineSync(conn_) == 1;
  if (!sent) {
    const absl::Status failed =
        Error(absl::StatusCode::kUnavailable, operation,
              absl::StrCat("cannot send: ", StripNewline(PQerrorMessage(conn_))));
    PQfinish(conn_);  // a half-sent pipeline: start again on a new connection
    conn_ = nullptr;
    return failed;
  }
  // Each statement's result (then a null), an aborted marker for those
  // after a failure, and the sync, which the server answers after the
  // implicit transaction committed (or rolled back).
  const absl::Time deadline = absl::Now() + options_.call_timeout;
  std::vector<PgResult> results;
  absl::Status failed = absl::OkStatus();
  size_t index = 0;  // into commands
  for (;;) {
    TF_ASSIGN_OR_RETURN(PGresult * raw, NextResult(deadline, operation));
    if (raw == nullptr) {
      ++index;  // the end of one command's results
      continue;
    }
    PgResult result(raw);
    const ExecStatusType status = PQresultStatus(raw);
    if (status == PGRES_PIPELINE_SYNC) break;
    const Command* command = index < commands.size() ? &commands[index] : nullptr;
    if (status == PGRES_FATAL_ERROR || status == PGRES_BAD_RESPONSE) {
      if (failed.ok()) {
        failed = ErrorOf(raw, command != nullptr ? absl::StrCat(operation, ": ",
                                                                statements[command->statement].what)
                                                 : std::string(operation));
      }
    } else if (status != PGRES_PIPELINE_ABORTED && command != nullptr) {
      if (command->preparing != nullptr) {
        prepared_[command->preparing] = command->name;  // parsed: it holds from now on
      } else {
        results.push_back(std::move(result));
      }
    }
  }
  if (PQexitPipelineMode(conn_) != 1) {
    PQfinish(conn_);
    conn_ = nullptr;
  }
  TF_RETURN_IF_ERROR(failed);
  if (results.size() != statements.size()) {
    return Error(absl::StatusCode::kInternal, operation,
                 absl::StrCat(results.size(), " results for ", statements.size(), " statements"));
  }
  return results;
}

absl::StatusOr<PgResult> PgConnection::Exec(const char* sql, const PgParams& params,
                                            absl::string_view operation) {
  TF_RETURN_IF_ERROR(EnsureConnected(operation));
  const std::vector<const char*> values = params.pointers();
  const bool sent = PQsendQueryParams(conn_, sql, params.size(), params.types(), values.data(),
                                      params.lengths(), params.formats(), /*resultFormat=*/1) == 1;
  return Finish(sent, operation);
}

absl::Status PgConnection::Run(const char* sql, absl::string_view operation) {
  TF_RETURN_IF_ERROR(EnsureConnected(operation));
  return Finish(PQsendQuery(conn_, sql) == 1, operation).status();
}

absl::Status PgConnection::Commit(absl::string_view operation) {
  const std::string what = absl::StrCat(operation, ": commit");
  TF_RETURN_IF_ERROR(EnsureConnected(what));
  TF_ASSIGN_OR_RETURN(PgResult result, Finish(PQsendQuery(conn_, "COMMIT") == 1, what));
  // COMMIT of a transaction that failed earlier answers ROLLBACK, not an
  // error.
  if (result.command() != "COMMIT") {
    return Error(absl::StatusCode::kAborted, what,
                 absl::StrCat("the server answered ", result.command(), ": nothing was written"));
  }
  return absl::OkStatus();
}

void PgConnection::RollbackIfOpen() {
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) return;
  if (PQtransactionStatus(conn_) == PQTRANS_IDLE) return;
  absl::Status ignored = Finish(PQsendQuery(conn_, "ROLLBACK") == 1, "rollback").status();
  (void)ignored;
}

}  // namespace tunefleet
