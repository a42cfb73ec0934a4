// BuilderDaemon: the builder process. A WorkerDaemon (role BUILDER,
// parallelism = build threads) with a BuildService plugged in: every
// BuildRequest from the stream is handled by the service and its BuildResult
// sent back on the stream. Stop() drains: no new builds, builds in hand
// finish (up to the drain timeout), then the stream closes.
//
// The builder dials out and serves nothing, so it has no gRPC health service
// and no port of its own; the tracker sees it live through its stream and
// heartbeats (ListDevices shows it).
#ifndef TUNEFLEET_BUILDER_WORKER_BUILDER_DAEMON_H_
#define TUNEFLEET_BUILDER_WORKER_BUILDER_DAEMON_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "builder_worker/build_service.h"
#include "worker_stream/lease_counter.h"
#include "worker_stream/worker_daemon.h"

namespace tunefleet {

struct BuilderDaemonOptions {
  WorkerDaemonOptions worker;
  BuildServiceOptions service;  // parallelism, cache size

  [[nodiscard]] absl::Status Validate() const;
};

class BuilderDaemon final : private WorkerRoleInterface {
 public:
  // `options` must be valid (Validate()).
  explicit BuilderDaemon(BuilderDaemonOptions options);
  ~BuilderDaemon() override;  // Stop()

  void Start();
  // Drains (WorkerDaemon::Stop), then joins the build threads; results of
  // builds still running are dropped (the tracker requeued them).
  void Stop();

  const WorkerConnection& connection() const { return worker_->connection(); }
  const BuildService& service() const { return *service_; }

 private:
  void OnMessage(const proto::TrackerMessage& message) override;
  void OnSession(const proto::Registered& registered) override;
  int64_t InFlight() const override { return leases_.count(); }
  void SendResult(proto::BuildResult result);

  const BuilderDaemonOptions options_;
  std::unique_ptr<BuildService> service_;
  LeaseCounter leases_;  // handed to the service, not answered
  std::unique_ptr<WorkerDaemon> worker_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_BUILDER_WORKER_BUILDER_DAEMON_H_
