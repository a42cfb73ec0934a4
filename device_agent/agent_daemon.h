// AgentDaemon: the device agent process. A WorkerDaemon (role AGENT, the
// device key and the detected DeviceInfo) with an AgentService plugged in:
// every MeasureRequest from the stream is measured and its MeasureResult
// sent back on the stream. Stop() drains: no new measurements, the ones in
// hand finish (up to the drain timeout), then the stream closes.
//
// The agent dials out (boards sit behind NAT) and serves nothing, so it has
// no gRPC health service of its own; the tracker sees it through its stream.
// Simulated agents for tests and benchmarks are a separate binary
// (//tests:fake_agent), not a mode of this one.
#ifndef TUNEFLEET_DEVICE_AGENT_AGENT_DAEMON_H_
#define TUNEFLEET_DEVICE_AGENT_AGENT_DAEMON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/signing.h"
#include "device_agent/agent_service.h"
#include "kernel_runtime/runner_interface.h"
#include "kernel_runtime/runner_protocol.h"
#include "proto/fleet.pb.h"
#include "worker_stream/lease_counter.h"
#include "worker_stream/worker_daemon.h"

namespace tunefleet {

inline constexpr char kAgentVersion[] = "tunefleet-agent/1";

struct AgentDaemonOptions {
  WorkerDaemonOptions worker;
  std::string device_key;  // required: which queue this device serves
  int kernel_threads = 0;  // runner threads; 0 = all cores
  int gpu_device = 0;      // CUDA device that GPU artifacts run on
  // Emulated boards only: the command the runner child is started through,
  // e.g. {"qemu-aarch64", "-L", "/"} (RunnerOptions::launcher).
  std::vector<std::string> runner_launcher;
  // The runner child's sandbox (RunnerOptions::sandbox); on by default.
  RunnerSandboxOptions runner_sandbox;
  int64_t cache_capacity_bytes = int64_t{512} << 20;
  // AgentServiceOptions::require_signed_artifacts.
  bool require_signed_artifacts = false;
  // Builder keys this agent pins itself (--builder_keys): set, it loads only
  // artifacts they signed, whatever keys a tracker (or a man in the middle)
  // hands it at registration. Empty: it follows the tracker's.
  PinnedKeys builder_keys;

  [[nodiscard]] absl::Status Validate() const;
};

class AgentDaemon final : private WorkerRoleInterface {
 public:
  // Artifacts refused for their signature (AgentService::artifacts_refused).
  int64_t artifacts_refused() const { return service_->artifacts_refused(); }
  // Creates the Runner; NotFound when the tunefleet_runner binary cannot be
  // found.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AgentDaemon>> Create(
      AgentDaemonOptions options, proto::DeviceInfo device);
  // With a runner the caller owns (tests); not null.
  AgentDaemon(AgentDaemonOptions options, proto::DeviceInfo device, RunnerInterface* runner);
  ~AgentDaemon() override;  // Stop()

  void Start();
  // Drains (WorkerDaemon::Stop), then waits for the measurement in progress.
  void Stop();

  const WorkerConnection& connection() const { return worker_->connection(); }

 private:
  void OnMessage(const proto::TrackerMessage& message) override;
  void OnSession(const proto::Registered& registered) override;
  int64_t InFlight() const override { return leases_.count(); }
  void SendResult(proto::MeasureResult result);

  const AgentDaemonOptions options_;
  std::unique_ptr<RunnerInterface> owned_runner_;
  std::unique_ptr<AgentService> service_;
  LeaseCounter leases_;  // handed to the service, not answered
  std::unique_ptr<WorkerDaemon> worker_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_DEVICE_AGENT_AGENT_DAEMON_H_
