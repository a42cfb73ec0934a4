#include "tracker/store/postgres_test_server.h"

#include <netinet/in.h>
#include <postgresql/libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/file_util.h"
#include "common/status_macros.h"

namespace tunefleet {
namespace {

// The newest /usr/lib/postgresql/<version>/bin holding a server.
[[nodiscard]] absl::StatusOr<std::string> FindBinDir() {
  std::string best;
  int best_version = -1;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", error)) {
    const std::string bin = entry.path().string() + "/bin";
    int version = atoi(entry.path().filename().c_str());
    if (version > best_version && access((bin + "/postgres").c_str(), X_OK) == 0) {
      best = bin;
      best_version = version;
    }
  }
  if (best.empty()) {
    return absl::NotFoundError(
        "no PostgreSQL server under /usr/lib/postgresql/*/bin (install Debian's postgresql: "
        "./scripts/install_deps.sh test)");
  }
  return best;
}

[[nodiscard]] absl::StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return absl::InternalError("cannot bind 127.0.0.1:0");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresTestServer>> PostgresTestServer::Start() {
  return Start(Options{});
}

absl::StatusOr<std::unique_ptr<PostgresTestServer>> PostgresTestServer::Start(Options options) {
  std::unique_ptr<PostgresTestServer> server(new PostgresTestServer());
  server->options_ = options;
  TF_ASSIGN_OR_RETURN(server->bindir_, FindBinDir());
  const bool root = geteuid() == 0;
  // Under root the server's user must reach its directory: /tmp, not a
  // test directory under root's home.
  const char* test_tmp = getenv("TEST_TMPDIR");
  std::string pattern =
      absl::StrCat(root || test_tmp == nullptr ? "/tmp" : test_tmp, "/tunefleet_pg.XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) return absl::InternalError("mkdtemp " + pattern);
  server->root_ = pattern;
  server->data_dir_ = pattern + "/data";
  if (root) {
    const passwd* nobody = getpwnam("nobody");
    if (nobody == nullptr) return absl::NotFoundError("no user 'nobody' to run PostgreSQL as");
    if (chown(server->root_.c_str(), nobody->pw_uid, nobody->pw_gid) != 0)
      return absl::InternalError("chown " + server->root_);
    server->as_user_ = {"/usr/bin/setpriv", absl::StrCat("--reuid=", nobody->pw_uid),
                        absl::StrCat("--regid=", nobody->pw_gid), "--clear-groups", "--"};
  }
  std::vector<std::string> initdb = server->as_user_;
  for (const std::string& arg :
       {server->bindir_ + "/initdb", std::string("-D"), server->data_dir_,
        std::string("--username=tunefleet"), std::string("--auth=trust"),
        std::string("--encoding=UTF8"), std::string("--no-locale"), std::string("--no-sync")}) {
    initdb.push_back(arg);
  }
  TF_ASSIGN_OR_RETURN(Process init, Process::Spawn(initdb, server->root_ + "/initdb.log"));
  const std::optional<int> init_status = init.Wait(120);
  if (!init_status.has_value() || *init_status != 0) {
    return absl::InternalError("initdb failed; see " + server->root_ + "/initdb.log");
  }
  if (!options.tls_cert_pem.empty()) {
    // The key readable by the server's user only, as PostgreSQL insists.
    const std::string dir = server->root_;
    TF_RETURN_IF_ERROR(ReplaceFileAtomically(dir + "/server.crt", options.tls_cert_pem, 0644));
    TF_RETURN_IF_ERROR(ReplaceFileAtomically(dir + "/server.key", options.tls_key_pem, 0600));
    TF_RETURN_IF_ERROR(ReplaceFileAtomically(dir + "/pg_hba.conf",
                                             "hostssl all all 127.0.0.1/32 trust\n"
                                             "host    all all 127.0.0.1/32 reject\n",
                                             0644));
    if (root) {
      const passwd* nobody = getpwnam("nobody");
      for (const char* file : {"/server.crt", "/server.key", "/pg_hba.conf"}) {
        if (nobody == nullptr || chown((dir + file).c_str(), nobody->pw_uid, nobody->pw_gid) != 0)
          return absl::InternalError(absl::StrCat("chown ", dir, file));
      }
    }
  }
  TF_ASSIGN_OR_RETURN(server->port_, FreePort());
  TF_RETURN_IF_ERROR(server->Launch());
  return server;
}

absl::Status PostgresTestServer::Launch() {
  std::vector<std::string> argv = as_user_;
  for (const std::string& arg :
       {bindir_ + "/postgres", std::string("-D"), data_dir_, std::string("-p"), absl::StrCat(port_),
        std::string("-c"), std::string("listen_addresses=127.0.0.1"), std::string("-c"),
        std::string("unix_socket_directories="), std::string("-c"),
        std::string(options_.durable ? "fsync=on" : "fsync=off"), std::string("-c"),
        std::string("max_connections=50")}) {
    argv.push_back(arg);
  }
  if (!options_.tls_cert_pem.empty()) {
    for (const std::string& setting :
         {std::string("ssl=on"), "ssl_cert_file=" + root_ + "/server.crt",
          "ssl_key_file=" + root_ + "/server.key", "hba_file=" + root_ + "/pg_hba.conf"}) {
      argv.push_back("-c");
      argv.push_back(setting);
    }
  }
  TF_ASSIGN_OR_RETURN(server_, Process::Spawn(argv, root_ + "/postgres.log"));
  const std::string ping = absl::StrCat("host=127.0.0.1 port=", port_, " dbname=postgres");
  for (int i = 0; i < 600; ++i) {
    if (PQping(ping.c_str()) == PQPING_OK) return absl::OkStatus();
    if (!server_.running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return absl::UnavailableError("PostgreSQL did not start; see " + root_ + "/postgres.log");
}

PostgresTestServer::~PostgresTestServer() {
  if (server_.running()) {
    server_.Kill(SIGINT);  // fast shutdown: disconnects every session
    if (!server_.Wait(20).has_value()) server_.Kill(SIGKILL);
    server_.Wait(10);
  }
  std::error_code ignored;
  if (!root_.empty()) std::filesystem::remove_all(root_, ignored);
}

std::string PostgresTestServer::Address(const std::string& name) const {
  return absl::StrCat("postgresql://tunefleet@127.0.0.1:", port_, "/", name);
}

absl::Status PostgresTestServer::Sql(const std::string& sql) {
  PGconn* conn = PQconnectdb(Address("postgres").c_str());
  absl::Status status;
  if (PQstatus(conn) != CONNECTION_OK) {
    status = absl::UnavailableError(PQerrorMessage(conn));
  } else {
    PGresult* result = PQexec(conn, sql.c_str());
    const ExecStatusType rc = PQresultStatus(result);
    if (rc != PGRES_COMMAND_OK && rc != PGRES_TUPLES_OK) {
      status = absl::InternalError(absl::StrCat(sql, ": ", PQresultErrorMessage(result)));
    }
    PQclear(result);
  }
  PQfinish(conn);
  return status;
}

absl::StatusOr<std::string> PostgresTestServer::NewDatabase(const std::string& name) {
  TF_RETURN_IF_ERROR(Sql(absl::StrCat("CREATE DATABASE \"", name, "\"")));
  return Address(name);
}

absl::Status PostgresTestServer::KillAndRestart() {
  server_.Kill(SIGKILL);
  server_.Wait(10);
  // The new postmaster finds the old one's lock file stale (its pid is
  // gone) and starts on the same data, replaying what the log holds. The
  // old postmaster's backends (each its own process group) exit only once
  // they notice it died; until then the new one refuses the shared memory
  // they still hold and exits at once, so try again for a while.
  absl::Status launched;
  for (int attempt = 0; attempt < 60; ++attempt) {
    launched = Launch();
    if (launched.ok()) return launched;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return launched;
}

absl::Status PostgresTestServer::TerminateSessions(const std::string& application_name) {
  // Signals them all first (one at a time, waiting for each, would let a
  // standby take a lease between two terminations), then waits for each.
  return Sql(absl::StrCat(
      "DO $$ DECLARE pids int[]; BEGIN "
      "SELECT array_agg(pid) INTO pids FROM pg_stat_activity WHERE application_name = '",
      application_name,
      "'; "
      "PERFORM pg_terminate_backend(p) FROM unnest(pids) AS p; "
      "PERFORM pg_terminate_backend(p, 10000) FROM unnest(pids) AS p; "
      "END $$"));
}

[[nodiscard]] absl::StatusOr<PostgresTestServer*> SharedPostgresTestServer() {
  // Destroyed at exit, which stops the server.
  static absl::StatusOr<std::unique_ptr<PostgresTestServer>> server = PostgresTestServer::Start();
  if (!server.ok()) return server.status();
  return server->get();
}

[[nodiscard]] absl::StatusOr<std::string> NewSharedTestDatabase() {
  static std::atomic<int> databases{0};
  TF_ASSIGN_OR_RETURN(PostgresTestServer * server, SharedPostgresTestServer());
  return server->NewDatabase(absl::StrCat("test_", ++databases));
}

}  // namespace tunefleet
