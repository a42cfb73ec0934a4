#include "builder_worker/builder_daemon.h"

#include <utility>

#include "common/logging.h"
#include "tuner_core/measure/measure.h"

namespace tunefleet {

absl::Status BuilderDaemonOptions::Validate() const {
  if (absl::Status valid = worker.Validate(); !valid.ok()) return valid;
  return service.Validate();
}

BuilderDaemon::BuilderDaemon(BuilderDaemonOptions options) : options_(std::move(options)) {
  service_ = std::make_unique<BuildService>(options_.service);
  proto::Register registration;
  registration.set_role(proto::BUILDER);
  registration.set_parallelism(service_->parallelism());
  registration.set_version(kBuilderVersion);
  if (options_.service.signing_key.has_value()) {
    registration.set_signing_key(options_.service.signing_key->public_key_text());
  }
  worker_ = std::make_unique<WorkerDaemon>(options_.worker, std::move(registration),
                                           static_cast<WorkerRoleInterface*>(this));
}

BuilderDaemon::~BuilderDaemon() { Stop(); }

void BuilderDaemon::Start() {
  TF_LOG(INFO) << "builder " << options_.worker.name
               << " starting: tracker=" << options_.worker.tracker_address
               << " parallelism=" << service_->parallelism()
               << " cache_bytes=" << options_.service.cache_capacity_bytes << " signing_key="
               << (options_.service.signing_key.has_value()
                       ? options_.service.signing_key->public_key_text()
                       : std::string("none (artifacts unsigned)"));
  worker_->Start();
}

void BuilderDaemon::Stop() {
  worker_->Stop();
  service_.reset();  // joins the build threads
}

void BuilderDaemon::OnSession(const proto::Registered& registered) {
  leases_.Dropped(service_->DropQueued(), registered.worker_id(), "builds");
}

void BuilderDaemon::OnMessage(const proto::TrackerMessage& message) {
  if (!message.has_build()) {
    if (!message.has_error()) {
      TF_LOG(WARNING) << "builder ignores tracker message kind " << message.kind_case();
    }
    return;
  }
  leases_.Took();
  service_->Handle(message.build(),
                   [this](proto::BuildResult result) { SendResult(std::move(result)); });
}

void BuilderDaemon::SendResult(proto::BuildResult result) {
  if (result.error_no() != 0) {
    TF_LOG(INFO) << "build lease=" << result.lease_id() << " "
                 << MeasureErrorName(static_cast<MeasureErrorNo>(result.error_no())) << ": "
                 << result.error_msg();
  } else {
    TF_LOG(DEBUG) << "build lease=" << result.lease_id() << " ok " << result.shared_object().size()
                  << " bytes in " << result.build_seconds() << " s"
                  << (result.from_cache() ? " (cache)" : "");
  }
  proto::WorkerMessage message;
  *message.mutable_build_result() = std::move(result);
  leases_.Answer(*worker_, message);
}

}  // namespace tunefleet
