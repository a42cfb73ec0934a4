// AgentDaemon: the device agent process's wiring. One WorkerConnection (role
// AGENT, the device key and DetectHostDevice()'s DeviceInfo) to the tracker
// and one AgentService: every MeasureRequest from the stream is measured and
// its MeasureResult sent back on the stream.
//
// The agent dials out (boards sit behind NAT) and serves nothing, so it has
// no gRPC health service of its own; the tracker sees it through its stream.
#ifndef TUNEFLEET_DEVICE_AGENT_AGENT_DAEMON_H_
#define TUNEFLEET_DEVICE_AGENT_AGENT_DAEMON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/worker_connection.h"
#include "device_agent/agent_service.h"
#include "device_agent/runner_interface.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

inline constexpr char kAgentVersion[] = "tunefleet-agent/1";

struct AgentDaemonOptions {
  std::string tracker_address;
  std::string token;
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // TLS; null = plaintext (loopback)
  std::string name;
  std::string device_key;         // required: which queue this device serves
  int kernel_threads = 0;         // runner threads; 0 = all cores
  int gpu_device = 0;             // CUDA device that GPU artifacts run on
  // Emulated boards only: the command the runner child is started through,
  // e.g. {"qemu-aarch64", "-L", "/"} (RunnerOptions::launcher).
  std::vector<std::string> runner_launcher;
  double simulated_measure_s = 0; // test/bench only: > 0 means no Runner at all
  int64_t cache_capacity_bytes = int64_t{512} << 20;

  [[nodiscard]] absl::Status Validate() const;
};

class AgentDaemon {
 public:
  // Creates the Runner (none when simulated); NotFound when the
  // tunefleet_runner binary cannot be found.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AgentDaemon>> Create(
      AgentDaemonOptions options, proto::DeviceInfo device);
  // With a runner the caller owns (tests); null only when simulated.
  AgentDaemon(AgentDaemonOptions options, proto::DeviceInfo device, RunnerInterface* runner);
  ~AgentDaemon();  // Stop()

  void Start();
  // Closes the stream, then waits for the measurement in progress.
  void Stop();

  const WorkerConnection& connection() const { return *connection_; }

 private:
  void OnMessage(const proto::TrackerMessage& message);
  void SendResult(proto::MeasureResult result);

  const AgentDaemonOptions options_;
  std::unique_ptr<RunnerInterface> owned_runner_;
  // Declared before the service, destroyed after it: the measuring thread
  // may still send (and fail quietly) while the service shuts down.
  std::unique_ptr<WorkerConnection> connection_;
  std::unique_ptr<AgentService> service_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_AGENT_DAEMON_H_
