// Test scaffolding: a throwaway PostgreSQL server on 127.0.0.1 (Debian's
// postgresql package), started by the test that needs it: initdb into a
// fresh directory, the server on a free port, trust authentication for
// user "tunefleet", no Unix socket. PostgreSQL refuses to run as root, so
// under root the server runs as "nobody" (setpriv) from a directory under
// /tmp it owns. Stopped (fast shutdown) and its directory removed when
// destroyed.
//
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<PostgresTestServer> pg, PostgresTestServer::Start());
//   TF_ASSIGN_OR_RETURN(std::string address, pg->NewDatabase("store_test_1"));
//   // address: "postgresql://tunefleet@127.0.0.1:<port>/store_test_1"
//
// Tests share one server per test binary and take a fresh database each:
//
//   TF_ASSIGN_OR_RETURN(std::string address, NewSharedTestDatabase());
#ifndef TUNEFLEET_TRACKER_STORE_POSTGRES_TEST_SERVER_H_
#define TUNEFLEET_TRACKER_STORE_POSTGRES_TEST_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/process.h"

namespace tunefleet {

class PostgresTestServer {
 public:
  struct Options {
    // Off for tests (no fsync per commit); on for benchmarks, which measure
    // the server as deployed (fsync and synchronous_commit on).
    bool durable = false;
    // A certificate for 127.0.0.1 and its key (PEM): the server then speaks
    // TLS and takes no connection without it (hostssl only), as a database
    // across a network is set up; a client asks with sslmode= in its address.
    std::string tls_cert_pem;
    std::string tls_key_pem;
  };
  // NotFound when no PostgreSQL server binaries are installed
  // (./scripts/install_deps.sh test installs them).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresTestServer>> Start();
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PostgresTestServer>> Start(Options options);
  ~PostgresTestServer();

  // Creates an empty database; its address.
  [[nodiscard]] absl::StatusOr<std::string> NewDatabase(const std::string& name);
  // The address of database `name` (which need not exist).
  std::string Address(const std::string& name) const;
  int port() const { return port_; }

  // Kills the server (SIGKILL: every session drops at once, as when its host
  // dies) and starts it again on the same port and data.
  [[nodiscard]] absl::Status KillAndRestart();
  // Terminates the backend serving the sessions of `application_name`, as
  // a network partition or an operator would, and waits (up to 10 s) until
  // those backends have exited: a signalled backend leaves asynchronously,
  // and a test that goes on at once would still see it in pg_stat_activity.
  [[nodiscard]] absl::Status TerminateSessions(const std::string& application_name);

 private:
  PostgresTestServer() = default;
  [[nodiscard]] absl::Status Launch();
  [[nodiscard]] absl::Status Sql(const std::string& sql);

  Options options_;
  std::string bindir_;
  std::string root_;                  // removed when destroyed
  std::string data_dir_;              // root_/data
  std::vector<std::string> as_user_;  // setpriv ... -- under root
  int port_ = 0;
  Process server_;
};

// The test binary's one server, started on first use and stopped when the
// binary exits (for tests that restart it or cut its sessions).
[[nodiscard]] absl::StatusOr<PostgresTestServer*> SharedPostgresTestServer();
// A fresh, empty database on that server; its address.
[[nodiscard]] absl::StatusOr<std::string> NewSharedTestDatabase();

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_POSTGRES_TEST_SERVER_H_
