// TrackerReplica: the tracker daemon as one of several replicas sharing a
// PostgreSQL store (tracker/store/postgres_lease.h), or alone on any other
// store. One replica leads; the others stand by on the same port:
//
//   standby  answers every WorkerGateway and JobService call with
//            UNAVAILABLE "standby tracker; the leader is at <address>" and
//            trailing metadata `tunefleet-leader: <address>`, which workers
//            and clients follow (rpc/leader_hint.h); its health service says
//            SERVING for "" while its database session lives (a healthy
//            standby is ready: a Kubernetes Service may route to it, and it
//            redirects; one that lost the database is not) and NOT_SERVING
//            for the two services; it serves this process's metrics on the
//            metrics port (for liveness probes); it tries the lease every
//            `standby_poll`.
//   leader   took the lease (a new epoch), then started the TrackerServer
//            on that epoch's fenced store, which resumes every job from the
//            store as a restart does; it checks the lease every
//            `lease_check` and, the moment a check fails, stops serving and
//            Wait() returns the reason (the daemon exits; its supervisor
//            starts it again as a standby).
//
//   ReplicaOptions replica;
//   replica.advertise = "tracker-0.tracker:7070";
//   TF_ASSIGN_OR_RETURN(auto tracker, TrackerReplica::Start(server_options, replica));
//   absl::Status ended = tracker->Wait();  // OK after Shutdown(); else the lease was lost
#ifndef TUNEFLEET_TRACKER_REPLICA_H_
#define TUNEFLEET_TRACKER_REPLICA_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "tracker/store/postgres_lease.h"
#include "tracker/tracker_server.h"

namespace tunefleet {

struct ReplicaOptions {
  // The address workers and clients reach this replica at, which standbys
  // hand out while it leads. Empty: `listen` with its bound port (a
  // wildcard host becomes this host's name).
  std::string advertise;
  absl::Duration standby_poll = absl::Seconds(1);
  // How often the leader renews its lease, and how long the lease lasts
  // unless renewed (LeaderLeaseOptions::ttl): a leader paused or cut off for
  // this long is replaced, and knows it when it wakes.
  absl::Duration lease_check = absl::Seconds(1);
  absl::Duration lease_ttl = absl::Seconds(5);
};

class StandbyServer;

class TrackerReplica {
 public:
  // Binds the port. With a PostgreSQL store: stands by until it leads; with
  // any other store: leads at once (no lease).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<TrackerReplica>> Start(
      TrackerServerOptions server, ReplicaOptions replica);
  ~TrackerReplica();  // Shutdown()

  int port() const { return port_; }
  // The metrics port, held by the standby and then the leader; 0 when off.
  int metrics_port() const { return metrics_port_; }
  bool leading() const { return leading_; }
  // Blocks until Shutdown() (OK) or until this replica stopped on its own:
  // the lease was lost, or leading failed to start (the reason).
  [[nodiscard]] absl::Status Wait();
  void Shutdown();

 private:
  TrackerReplica() = default;
  LeaderLeaseOptions LeaseOptions() const;
  // The replica's life on its own thread: standby, then leader.
  void Run();
  [[nodiscard]] absl::Status StandBy();
  [[nodiscard]] absl::Status Lead();

  TrackerServerOptions server_options_;
  ReplicaOptions options_;
  int port_ = 0;
  int metrics_port_ = 0;
  std::atomic<bool> leading_{false};
  std::unique_ptr<PostgresLeaderLease> lease_;
  std::unique_ptr<StandbyServer> standby_;
  absl::Mutex mutex_;
  std::unique_ptr<TrackerServer> server_ ABSL_GUARDED_BY(mutex_);
  absl::Status ended_ ABSL_GUARDED_BY(mutex_);
  absl::Notification stop_;
  absl::Notification done_;
  std::thread thread_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_REPLICA_H_
