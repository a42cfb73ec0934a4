#include "device_agent/agent_daemon.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "device_agent/runner.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

absl::Status AgentDaemonOptions::Validate() const {
  if (tracker_address.empty()) return absl::InvalidArgumentError("tracker address is empty");
  if (name.empty()) return absl::InvalidArgumentError("worker name is empty");
  if (device_key.empty()) {
    return absl::InvalidArgumentError("device key is empty: say which queue this device serves");
  }
  if (kernel_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel threads must be >= 0 (0 = all cores), got ", kernel_threads));
  }
  AgentServiceOptions service;
  service.artifact_cache_capacity_bytes = cache_capacity_bytes;
  service.simulated_measure_s = simulated_measure_s;
  return service.Validate();
}

absl::StatusOr<std::unique_ptr<AgentDaemon>> AgentDaemon::Create(AgentDaemonOptions options,
                                                                  proto::DeviceInfo device) {
  TF_RETURN_IF_ERROR(options.Validate());
  std::unique_ptr<RunnerInterface> runner;
  if (options.simulated_measure_s <= 0) {
    RunnerOptions runner_options;
    runner_options.num_threads = options.kernel_threads;
    runner_options.gpu_device = options.gpu_device;
    runner_options.launcher = options.runner_launcher;
    TF_ASSIGN_OR_RETURN(runner, Runner::Create(std::move(runner_options)));
  }
  auto daemon = std::make_unique<AgentDaemon>(std::move(options), std::move(device), runner.get());
  daemon->owned_runner_ = std::move(runner);
  return daemon;
}

AgentDaemon::AgentDaemon(AgentDaemonOptions options, proto::DeviceInfo device,
                         RunnerInterface* runner)
    : options_(std::move(options)) {
  AgentServiceOptions service_options;
  service_options.artifact_cache_capacity_bytes = options_.cache_capacity_bytes;
  service_options.simulated_measure_s = options_.simulated_measure_s;
  service_ = std::make_unique<AgentService>(runner, service_options);

  device.set_simulated_measure_s(options_.simulated_measure_s);
  WorkerConnectionOptions connection_options;
  connection_options.tracker_address = options_.tracker_address;
  connection_options.token = options_.token;
  connection_options.credentials = options_.credentials;
  proto::Register& registration = connection_options.registration;
  registration.set_role(proto::AGENT);
  registration.set_name(options_.name);
  registration.set_device_key(options_.device_key);
  *registration.mutable_device() = std::move(device);
  registration.set_parallelism(1);  // one measurement at a time
  registration.set_version(kAgentVersion);
  connection_ = std::make_unique<WorkerConnection>(
      std::move(connection_options),
      [this](const proto::TrackerMessage& message) { OnMessage(message); },
      [this](const std::string& worker_id) {
        const int64_t dropped = service_->DropQueued();
        if (dropped > 0) {
          TF_LOG(INFO) << "new session " << worker_id << ": dropped " << dropped
                       << " queued measurements of the previous one";
        }
      });
}

AgentDaemon::~AgentDaemon() { Stop(); }

void AgentDaemon::Start() {
  TF_LOG(INFO) << "agent " << options_.name << " starting: tracker=" << options_.tracker_address
               << " device_key=" << options_.device_key
               << (options_.simulated_measure_s > 0
                       ? absl::StrCat(" simulated_measure_s=", options_.simulated_measure_s)
                       : absl::StrCat(" kernel_threads=", options_.kernel_threads));
  connection_->Start();
}

void AgentDaemon::Stop() {
  connection_->Stop();
  service_.reset();  // joins the measuring thread
}

void AgentDaemon::OnMessage(const proto::TrackerMessage& message) {
  if (!message.has_measure()) {
    if (!message.has_error()) {
      TF_LOG(WARNING) << "agent ignores tracker message kind " << message.kind_case();
    }
    return;
  }
  service_->Handle(message.measure(),
                   [this](proto::MeasureResult result) { SendResult(std::move(result)); });
}

void AgentDaemon::SendResult(proto::MeasureResult result) {
  const std::string lease_id = result.lease_id();
  if (result.run().error_no() != 0 && !result.need_artifact()) {
    TF_LOG(INFO) << "measure lease=" << lease_id << " "
                 << MeasureErrorName(static_cast<MeasureErrorNo>(result.run().error_no())) << ": "
                 << result.run().error_msg();
  }
  proto::WorkerMessage message;
  *message.mutable_measure_result() = std::move(result);
  if (!connection_->Send(message)) {
    TF_LOG(INFO) << "measure result lease=" << lease_id << " dropped: no session with the tracker";
  }
}

}  // namespace tunefleet
