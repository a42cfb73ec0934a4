#include "device_agent/agent_daemon.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/signing.h"
#include "common/status_macros.h"
#include "kernel_runtime/runner.h"
#include "proto_convert/measure_result.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

absl::Status AgentDaemonOptions::Validate() const {
  TF_RETURN_IF_ERROR(worker.Validate());
  if (device_key.empty()) {
    return absl::InvalidArgumentError("device key is empty: say which queue this device serves");
  }
  if (kernel_threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel threads must be >= 0 (0 = all cores), got ", kernel_threads));
  }
  AgentServiceOptions service;
  service.artifact_cache_capacity_bytes = cache_capacity_bytes;
  return service.Validate();
}

absl::StatusOr<std::unique_ptr<AgentDaemon>> AgentDaemon::Create(AgentDaemonOptions options,
                                                                 proto::DeviceInfo device) {
  TF_RETURN_IF_ERROR(options.Validate());
  RunnerOptions runner_options;
  runner_options.num_threads = options.kernel_threads;
  runner_options.gpu_device = options.gpu_device;
  runner_options.launcher = options.runner_launcher;
  runner_options.sandbox = options.runner_sandbox;
  TF_ASSIGN_OR_RETURN(std::unique_ptr<RunnerInterface> runner,
                      Runner::Create(std::move(runner_options)));
  auto daemon = std::make_unique<AgentDaemon>(std::move(options), std::move(device), runner.get());
  daemon->owned_runner_ = std::move(runner);
  return daemon;
}

AgentDaemon::AgentDaemon(AgentDaemonOptions options, proto::DeviceInfo device,
                         RunnerInterface* runner)
    : options_(std::move(options)) {
  AgentServiceOptions service_options;
  service_options.artifact_cache_capacity_bytes = options_.cache_capacity_bytes;
  service_options.require_signed_artifacts = options_.require_signed_artifacts;
  // Costs faster than this device could run their FLOPs are refused here,
  // before they reach the tracker (which applies the same rule).
  service_options.max_gflops = PlausiblePeakGflops(device);
  // The fixed calibration kernel, on the measuring thread; the tracker asks
  // for it at registration and while the agent is idle.
  service_options.calibrate = [] {
    RealClock clock;
    return RunCalibration(CalibrationOptions{}, clock);
  };
  service_ = std::make_unique<AgentService>(runner, service_options);
  if (!options_.builder_keys.empty()) service_->SetPinnedBuilderKeys(options_.builder_keys);

  proto::Register registration;
  registration.set_role(proto::AGENT);
  registration.set_device_key(options_.device_key);
  *registration.mutable_device() = std::move(device);
  registration.set_parallelism(1);  // one measurement at a time
  registration.set_version(kAgentVersion);
  registration.set_calibrates(true);
  worker_ = std::make_unique<WorkerDaemon>(options_.worker, std::move(registration),
                                           static_cast<WorkerRoleInterface*>(this));
}

AgentDaemon::~AgentDaemon() { Stop(); }

void AgentDaemon::Start() {
  TF_LOG(INFO) << "agent " << options_.worker.name
               << " starting: tracker=" << options_.worker.tracker_address
               << " device_key=" << options_.device_key
               << " kernel_threads=" << options_.kernel_threads;
  worker_->Start();
}

void AgentDaemon::Stop() {
  worker_->Stop();
  service_.reset();  // joins the measuring thread
}

void AgentDaemon::OnSession(const proto::Registered& registered) {
  leases_.Dropped(service_->DropQueued(), registered.worker_id(), "measurements");
  // Keys of its own: the tracker's list changes nothing.
  if (!options_.builder_keys.empty()) {
    for (const std::string& key : registered.builder_keys()) {
      if (!options_.builder_keys.Contains(key)) {
        TF_LOG(WARNING) << "the tracker pins builder key " << key
                        << ", which this agent's --builder_keys does not; its artifacts will be "
                           "refused";
      }
    }
    return;
  }
  // The builder keys the tracker pins, renewed with every session (a
  // tracker restarted with other keys is followed).
  absl::StatusOr<PinnedKeys> pinned =
      PinnedKeys::FromTexts({registered.builder_keys().begin(), registered.builder_keys().end()});
  if (!pinned.ok()) {
    // Keys that do not parse pin nothing we could verify against: refuse
    // every artifact rather than run unsigned code.
    TF_LOG(ERROR) << "the tracker's pinned builder keys do not parse (" << pinned.status()
                  << "); refusing every artifact of this session";
    service_->SetPinnedBuilderKeys(PinnedKeys::RefuseAll());
    return;
  }
  if (!pinned->empty()) {
    TF_LOG(INFO) << "loading only artifacts signed by the tracker's " << pinned->texts().size()
                 << " pinned builder key(s)";
  }
  service_->SetPinnedBuilderKeys(*std::move(pinned));
}

void AgentDaemon::OnMessage(const proto::TrackerMessage& message) {
  if (message.has_abort_measure()) {
    TF_LOG(INFO) << "measure lease=" << message.abort_measure().lease_id()
                 << " aborted by the tracker: " << message.abort_measure().reason();
    service_->Abort(message.abort_measure().lease_id(), message.abort_measure().reason());
    return;
  }
  if (message.has_calibrate()) {
    TF_LOG(INFO) << "calibrating (" << message.calibrate().reason() << ")";
    service_->Calibrate([this](proto::Calibration calibration) {
      if (calibration.error().empty()) {
        TF_LOG(INFO) << "calibration: " << calibration.gflops() << " GFLOPS, spread "
                     << 100 * calibration.noise() << " %";
      } else {
        TF_LOG(WARNING) << "calibration failed: " << calibration.error();
      }
      proto::WorkerMessage answer;
      *answer.mutable_calibration() = std::move(calibration);
      worker_->Send(answer);
    });
    return;
  }
  if (!message.has_measure()) {
    if (!message.has_error()) {
      TF_LOG(WARNING) << "agent ignores tracker message kind " << message.kind_case();
    }
    return;
  }
  leases_.Took();
  service_->Handle(message.measure(),
                   [this](proto::MeasureResult result) { SendResult(std::move(result)); });
}

void AgentDaemon::SendResult(proto::MeasureResult result) {
  if (result.run().error_no() != 0 && !result.need_artifact()) {
    TF_LOG(INFO) << "measure lease=" << result.lease_id() << " "
                 << MeasureErrorName(static_cast<MeasureErrorNo>(result.run().error_no())) << ": "
                 << result.run().error_msg();
  }
  proto::WorkerMessage message;
  *message.mutable_measure_result() = std::move(result);
  leases_.Answer(*worker_, message);
}

}  // namespace tunefleet
