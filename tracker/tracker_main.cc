// tunefleet_tracker: the fleet's daemon. See tracker/tracker_server.h.
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "common/daemon_util.h"
#include "common/file_util.h"
#include "common/logging.h"
#include "tracker/replica.h"
#include "tracker/scheduler_flags.h"
#include "tracker/store/open_store.h"
#include "tracker/store/postgres_connection.h"
#include "tracker/store/sqlite_store.h"
#include "tracker/tracker_server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:7070",
          "host:port of the gRPC server (port 0: any free port)");
ABSL_FLAG(std::string, store, "tunefleet-tracker.db",
          "SQLite store (created if missing), or a PostgreSQL database shared by tracker "
          "replicas (postgresql://user@host:port/db?sslmode=verify-full; the password from "
          "PGPASSWORD or a password file, PGPASSFILE); empty: in memory");
ABSL_FLAG(std::string, advertise, "",
          "with a PostgreSQL store: the host:port workers and clients reach this replica at, "
          "which standbys hand out while it leads; empty: --listen's host (this host's name for "
          "a wildcard) and port");
ABSL_FLAG(double, standby_poll_s, 1.0,
          "with a PostgreSQL store: how often a standby tries to take the leader lease");
ABSL_FLAG(double, lease_check_s, 1.0,
          "with a PostgreSQL store: how often the leader renews its lease (it stops at once when "
          "a renewal fails)");
ABSL_FLAG(double, lease_ttl_s, 5.0,
          "with a PostgreSQL store: how long a lease lasts unless renewed; a standby takes over "
          "a leader that stopped renewing (paused, cut off) after this long, and at once one "
          "whose process died");
ABSL_FLAG(bool, store_sync_full, true,
          "fsync every commit (synchronous=FULL: survives power loss); false: synchronous=NORMAL, "
          "survives a killed tracker but may lose the last commits on power loss");
ABSL_FLAG(bool, store_check, false,
          "check the --store file (integrity, every row readable), print what is damaged, and exit "
          "(0: sound, 1: damaged or unreadable); never creates a store");
ABSL_FLAG(std::string, store_migrate, "",
          "copy every job, trial and record of --store into this (empty) store, e.g. a SQLite "
          "file into postgresql://..., print the counts, and exit (0: copied); the tracker "
          "must not be running on --store");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "host:port to serve Prometheus metrics at /metrics (fleet, process and build figures; "
          "the URL is logged at start); port 0: any free port; empty: off");
ABSL_FLAG(std::string, token_file, "",
          "role tokens file (lines '<role> <token>'); required off loopback");
ABSL_FLAG(std::string, tls_cert, "", "server certificate (PEM)");
ABSL_FLAG(std::string, tls_key, "", "server key (PEM)");
ABSL_FLAG(std::string, tls_client_ca, "", "CA that client certificates must be signed by (PEM)");
ABSL_FLAG(std::string, builder_keys, "",
          "pinned builder signing keys ('<name> ed25519:<base64>' per line, tunefleet keys new): "
          "builders must sign with one, agents load only artifacts signed by one");
ABSL_FLAG(bool, allow_unsigned_artifacts, false,
          "off loopback, start without --builder_keys (agents then load unsigned code)");
ABSL_FLAG(bool, allow_unbound_tokens, false,
          "off loopback, accept tokens not bound to a client certificate identity");
ABSL_FLAG(std::string, port_file, "",
          "write the bound port here once listening (for scripts and tests)");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("tunefleet_tracker: owns the fleet, its queues and the job store");
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_store_check)) {
    if (tunefleet::IsPostgresAddress(absl::GetFlag(FLAGS_store))) {
      std::cerr << "tunefleet_tracker: --store_check reads SQLite stores; check a PostgreSQL "
                   "store with its own tools (pg_amcheck, psql)\n";
      return 2;
    }
    return tunefleet::RunSqliteStoreCheck(absl::GetFlag(FLAGS_store), std::cout);
  }
  if (const std::string to = absl::GetFlag(FLAGS_store_migrate); !to.empty())
    return tunefleet::RunStoreMigrate(absl::GetFlag(FLAGS_store), to, std::cout);
  tunefleet::BlockTerminationSignals();  // before any thread starts

  tunefleet::TrackerServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.store_path = absl::GetFlag(FLAGS_store);
  options.store_synchronous_full = absl::GetFlag(FLAGS_store_sync_full);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.token_file = absl::GetFlag(FLAGS_token_file);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options.builder_keys_file = absl::GetFlag(FLAGS_builder_keys);
  options.allow_unsigned_artifacts = absl::GetFlag(FLAGS_allow_unsigned_artifacts);
  options.allow_unbound_tokens = absl::GetFlag(FLAGS_allow_unbound_tokens);
  options.scheduler = tunefleet::SchedulerOptionsFromFlags();  // tracker/scheduler_flags.h
  tunefleet::ReplicaOptions replica;
  replica.advertise = absl::GetFlag(FLAGS_advertise);
  replica.standby_poll = absl::Seconds(absl::GetFlag(FLAGS_standby_poll_s));
  replica.lease_check = absl::Seconds(absl::GetFlag(FLAGS_lease_check_s));
  replica.lease_ttl = absl::Seconds(absl::GetFlag(FLAGS_lease_ttl_s));
  absl::StatusOr<std::unique_ptr<tunefleet::TrackerReplica>> tracker =
      tunefleet::TrackerReplica::Start(options, replica);
  if (!tracker.ok()) {
    std::cerr << "tunefleet_tracker: " << tracker.status() << "\n";
    return 1;
  }
  if (const std::string port_file = absl::GetFlag(FLAGS_port_file); !port_file.empty()) {
    if (absl::Status written =
            tunefleet::ReplaceFileAtomically(port_file, absl::StrCat((*tracker)->port(), "\n"));
        !written.ok()) {
      std::cerr << "tunefleet_tracker: " << written << "\n";
      (*tracker)->Shutdown();
      return 1;
    }
  }
  std::thread signals([&] {
    const int sig = tunefleet::WaitForTerminationSignal();
    TF_LOG(INFO) << "signal " << sig << ": shutting down";
    (*tracker)->Shutdown();
  });
  const absl::Status ended = (*tracker)->Wait();
  if (!ended.ok()) {
    // The lease was lost (or leading failed): wake the signal thread, which
    // shuts down what is left; exit non-zero so a supervisor restarts this
    // replica as a standby.
    std::cerr << "tunefleet_tracker: " << ended << "\n";
    kill(getpid(), SIGTERM);
  }
  signals.join();  // Shutdown() runs there; let it finish before tearing down
  return ended.ok() ? 0 : 75;
}
