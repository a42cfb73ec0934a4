// The tracker daemon as a library: the store, the scheduler, the gRPC
// server (WorkerGateway + JobService, plus the standard grpc.health.v1.Health
// service, SERVING from the end of Start() until Shutdown(), and server
// reflection, grpc.reflection.v1alpha, so `grpcurl list` works), the metrics
// endpoint (the tracker's families plus the process metrics every daemon
// serves) and the tick thread, started and stopped together. main.cc and
// the in-process tests use exactly this. Health and reflection need no
// token: probes and tools see only what the public .proto files say.
//
//   TrackerServerOptions options;
//   options.listen = "127.0.0.1:0";
//   options.store_path = "/var/lib/tunefleet/tracker.db";
//   TF_ASSIGN_OR_RETURN(std::unique_ptr<TrackerServer> tracker, TrackerServer::Start(options));
//   std::cout << tracker->port();
//   tracker->Wait();
#ifndef TUNEFLEET_TRACKER_TRACKER_SERVER_H_
#define TUNEFLEET_TRACKER_TRACKER_SERVER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "metrics/metrics_server.h"
#include "tracker/auth.h"
#include "tracker/job_service.h"
#include "tracker/metrics.h"
#include "tracker/scheduler.h"
#include "tracker/store/store.h"
#include "tracker/worker_gateway.h"

namespace tunefleet {

struct TrackerServerOptions {
  // host:port; port 0 lets the kernel pick (see port()).
  std::string listen = "127.0.0.1:7070";
  // SQLite file (created if missing), or a PostgreSQL database
  // ("postgresql://...", tracker/store/postgres_store.h; replicas sharing it
  // run under tracker/replica.h). Empty: an in-memory store (nothing
  // survives a restart; tests only).
  std::string store_path;
  // With a PostgreSQL store: the leader epoch every write is fenced by
  // (PostgresStoreOptions::fence_epoch); 0: none.
  int64_t store_fence_epoch = 0;
  // SQLite synchronous=FULL (every commit fsynced: survives power loss);
  // false: NORMAL (survives a killed tracker; tests and `up`).
  bool store_synchronous_full = true;
  // host:port for /metrics; empty: no metrics endpoint.
  std::string metrics_listen;
  // Role tokens (tracker/auth.h). Empty: no authentication, which is only
  // allowed when `listen` is a loopback address.
  std::string token_file;
  // TLS: server certificate and key (PEM files); with tls_client_ca, client
  // certificates signed by that CA are required. Empty: plaintext, which is
  // only allowed on loopback.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // Pinned builder signing keys (common/signing.h LoadPinnedKeys). Set: a
  // builder must sign with one of them, every artifact is verified, and
  // agents load only artifacts signed by one of them. Off loopback it is
  // required unless allow_unsigned_artifacts.
  std::string builder_keys_file;
  bool allow_unsigned_artifacts = false;
  // Off loopback every token must be bound to a client certificate identity
  // (identity= in the token file) unless this is set.
  bool allow_unbound_tokens = false;
  int max_message_bytes = 128 << 20;
  SchedulerOptions scheduler;
};

// The tracker's tokens (null without a token file), once every check
// TrackerServer::Start makes before binding anything has passed: no tokens
// or plaintext off loopback, half a TLS pair, identity-bound tokens without
// client certificates and, off loopback, unbound tokens or no pinned builder
// keys (each refused with its way out). A replica on PostgreSQL runs these
// checks when it starts standing by, not only when it first leads
// (tracker/replica.h).
[[nodiscard]] absl::StatusOr<std::unique_ptr<TokenSet>> LoadCheckedTokens(
    const TrackerServerOptions& options);

// The gRPC server credentials `options` ask for: TLS (requiring client
// certificates with tls_client_ca) or plaintext. Shared with the standby
// server of a replica (tracker/replica.h), which answers on the same port.
[[nodiscard]] absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> TrackerServerCredentials(
    const TrackerServerOptions& options);

class TrackerServer {
 public:
  // `metrics`: a metrics server already listening (a standby's, taken over
  // without a gap), which then serves the tracker's registry too; null: one
  // is started on options.metrics_listen (when set).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<TrackerServer>> Start(
      TrackerServerOptions options, std::unique_ptr<MetricsServer> metrics = nullptr);
  ~TrackerServer();  // Shutdown()

  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  // "http://127.0.0.1:9464/metrics"; empty when metrics are off.
  std::string metrics_url() const {
    return metrics_server_ != nullptr ? metrics_server_->url() : "";
  }
  Scheduler& scheduler() { return *scheduler_; }

  // Blocks until Shutdown() (from another thread or a signal handler thread).
  void Wait();
  void Shutdown();

 private:
  TrackerServer() = default;
  void TickLoop();

  TrackerServerOptions options_;
  RealClock clock_;
  std::unique_ptr<TokenSet> tokens_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<TrackerMetrics> metrics_;
  std::unique_ptr<MetricsServer> metrics_server_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<WorkerGatewayService> gateway_;
  std::unique_ptr<JobServiceImpl> jobs_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  int metrics_port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread ticker_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_TRACKER_SERVER_H_
