#include "builder_worker/builder_daemon.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

absl::Status BuilderDaemonOptions::Validate() const {
  if (tracker_address.empty()) return absl::InvalidArgumentError("tracker address is empty");
  if (name.empty()) return absl::InvalidArgumentError("worker name is empty");
  BuildServiceOptions service;
  service.parallelism = parallelism;
  service.cache_capacity_bytes = cache_capacity_bytes;
  return service.Validate();
}

BuilderDaemon::BuilderDaemon(BuilderDaemonOptions options) : options_(std::move(options)) {
  BuildServiceOptions service_options;
  service_options.parallelism = options_.parallelism;
  service_options.cache_capacity_bytes = options_.cache_capacity_bytes;
  service_options.simulate_build_delay_s = options_.simulate_build_delay_s;
  service_options.simulate_build_s = options_.simulate_build_s;
  service_ = std::make_unique<BuildService>(service_options);

  WorkerConnectionOptions connection_options;
  connection_options.tracker_address = options_.tracker_address;
  connection_options.token = options_.token;
  connection_options.credentials = options_.credentials;
  connection_options.registration.set_role(proto::BUILDER);
  connection_options.registration.set_name(options_.name);
  connection_options.registration.set_parallelism(service_->parallelism());
  connection_options.registration.set_version(kBuilderVersion);
  connection_ = std::make_unique<WorkerConnection>(
      std::move(connection_options),
      [this](const proto::TrackerMessage& message) { OnMessage(message); },
      [this](const std::string& worker_id) {
        const int64_t dropped = service_->DropQueued();
        if (dropped > 0) {
          TF_LOG(INFO) << "new session " << worker_id << ": dropped " << dropped
                       << " queued builds of the previous one";
        }
      });
}

BuilderDaemon::~BuilderDaemon() { Stop(); }

void BuilderDaemon::Start() {
  TF_LOG(INFO) << "builder " << options_.name << " starting: tracker=" << options_.tracker_address
               << " parallelism=" << service_->parallelism()
               << " cache_bytes=" << options_.cache_capacity_bytes;
  connection_->Start();
}

void BuilderDaemon::Stop() {
  connection_->Stop();
  service_.reset();  // joins the build threads
}

void BuilderDaemon::OnMessage(const proto::TrackerMessage& message) {
  if (!message.has_build()) {
    if (!message.has_error()) {
      TF_LOG(WARNING) << "builder ignores tracker message kind " << message.kind_case();
    }
    return;
  }
  service_->Handle(message.build(), [this](proto::BuildResult result) { SendResult(std::move(result)); });
}

void BuilderDaemon::SendResult(proto::BuildResult result) {
  const std::string lease_id = result.lease_id();
  if (result.error_no() != 0) {
    TF_LOG(INFO) << "build lease=" << lease_id << " "
                 << MeasureErrorName(static_cast<MeasureErrorNo>(result.error_no())) << ": "
                 << result.error_msg();
  } else {
    TF_LOG(DEBUG) << "build lease=" << lease_id << " ok " << result.shared_object().size()
                  << " bytes in " << result.build_seconds() << " s"
                  << (result.from_cache() ? " (cache)" : "");
  }
  proto::WorkerMessage message;
  *message.mutable_build_result() = std::move(result);
  if (!connection_->Send(message)) {
    TF_LOG(INFO) << "build result lease=" << lease_id << " dropped: no session with the tracker";
  }
}

}  // namespace tunefleet
