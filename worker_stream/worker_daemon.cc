#include "worker_stream/worker_daemon.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/logging.h"

namespace tunefleet {

absl::Status WorkerDaemonOptions::Validate() const {
  if (tracker_address.empty()) return absl::InvalidArgumentError("tracker address is empty");
  if (name.empty()) return absl::InvalidArgumentError("worker name is empty");
  if (!(drain_timeout_s >= 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("drain timeout must be >= 0 seconds, got ", drain_timeout_s));
  }
  return absl::OkStatus();
}

bool IsNewWork(const proto::TrackerMessage& message) {
  switch (message.kind_case()) {
    case proto::TrackerMessage::kBuild:
    case proto::TrackerMessage::kMeasure:
    case proto::TrackerMessage::kAssignment:
      return true;
    default:
      return false;
  }
}

WorkerDaemon::WorkerDaemon(WorkerDaemonOptions options, proto::Register registration,
                           WorkerRoleInterface* role)
    : options_(std::move(options)), role_(role) {
  WorkerConnectionOptions connection_options;
  connection_options.tracker_address = options_.tracker_address;
  connection_options.token = options_.token;
  connection_options.credentials = options_.credentials;
  connection_options.tls_pem = options_.tls_pem;
  connection_options.registration = std::move(registration);
  connection_options.registration.set_name(options_.name);
  connection_ = std::make_unique<WorkerConnection>(
      std::move(connection_options),
      [this](const proto::TrackerMessage& message) { OnMessage(message); },
      [this](const proto::Registered& registered) { role_->OnSession(registered); });
}

WorkerDaemon::~WorkerDaemon() { Stop(); }

void WorkerDaemon::Start() { connection_->Start(); }

int64_t WorkerDaemon::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return 0;
    stopped_ = true;
    draining_ = true;
    progress_.SignalAll();
  }
  const Stopwatch draining;
  int64_t unfinished = role_->InFlight();
  if (unfinished > 0) {
    TF_LOG(INFO) << options_.name << " draining: " << unfinished << " in flight, up to "
                 << options_.drain_timeout_s << " s";
  }
  while (unfinished > 0 && connection_->connected()) {
    absl::MutexLock lock(&mu_);
    // Woken by every result sent; the timeout also catches work the role
    // dropped without answering (a new session).
    const double left = options_.drain_timeout_s - draining.ElapsedSeconds();
    if (left <= 0) break;
    progress_.WaitWithTimeout(&mu_, absl::Seconds(std::min(left, 0.1)));
    unfinished = role_->InFlight();
  }
  if (unfinished > 0) {
    TF_LOG(WARNING) << options_.name << " stops with " << unfinished
                    << " unanswered; the tracker requeues them";
  }
  connection_->Stop();
  return unfinished;
}

bool WorkerDaemon::Send(const proto::WorkerMessage& message) {
  const bool sent = connection_->Send(message);
  if (!sent) {
    const auto* kind = message.GetDescriptor()->FindFieldByNumber(message.kind_case());
    TF_LOG(INFO) << options_.name << ": " << (kind != nullptr ? kind->name() : "message")
                 << " dropped: no session with the tracker";
  }
  absl::MutexLock lock(&mu_);
  progress_.SignalAll();
  return sent;
}

bool WorkerDaemon::draining() const {
  absl::MutexLock lock(&mu_);
  return draining_;
}

int64_t WorkerDaemon::refused_while_draining() const {
  absl::MutexLock lock(&mu_);
  return refused_while_draining_;
}

void WorkerDaemon::OnMessage(const proto::TrackerMessage& message) {
  if (IsNewWork(message)) {
    absl::MutexLock lock(&mu_);
    if (draining_) {
      ++refused_while_draining_;
      TF_LOG(INFO) << options_.name << " is draining: new work left to the tracker to requeue";
      return;
    }
  }
  role_->OnMessage(message);
}

}  // namespace tunefleet
