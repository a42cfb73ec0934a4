// BuilderDaemon: the builder process's wiring. One WorkerConnection (role
// BUILDER, parallelism = build threads) to the tracker and one BuildService:
// every BuildRequest from the stream is handled by the service and its
// BuildResult sent back on the stream.
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
#include "common/worker_connection.h"

namespace tunefleet {

struct BuilderDaemonOptions {
  std::string tracker_address;
  std::string token;
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // TLS; null = plaintext (loopback)
  std::string name;
  int parallelism = 0;                              // 0 = all cores
  int64_t cache_capacity_bytes = int64_t{256} << 20;
  double simulate_build_delay_s = 0;                // test-only (BuildServiceOptions)
  double simulate_build_s = 0;                      // bench-only (BuildServiceOptions)

  [[nodiscard]] absl::Status Validate() const;
};

class BuilderDaemon {
 public:
  // `options` must be valid (Validate()).
  explicit BuilderDaemon(BuilderDaemonOptions options);
  ~BuilderDaemon();  // Stop()

  void Start();
  // Closes the stream, then waits for builds in progress (their results are
  // dropped: the tracker requeued them when the stream closed).
  void Stop();

  const WorkerConnection& connection() const { return *connection_; }
  const BuildService& service() const { return *service_; }

 private:
  void OnMessage(const proto::TrackerMessage& message);
  void SendResult(proto::BuildResult result);

  const BuilderDaemonOptions options_;
  // Declared first, destroyed last: the service's threads may still send
  // (and fail quietly) while it shuts down.
  std::unique_ptr<WorkerConnection> connection_;
  std::unique_ptr<BuildService> service_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_BUILDER_WORKER_BUILDER_DAEMON_H_
