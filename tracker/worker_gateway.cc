#include "tracker/worker_gateway.h"

#include <deque>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "rpc/grpc_status.h"

namespace tunefleet {
namespace {

using Reactor = grpc::ServerBidiReactor<proto::WorkerMessage, proto::TrackerMessage>;

// "builder", "agent", "tuner", or "unknown" for a registration without a role.
absl::string_view RoleLabel(proto::WorkerRole role) {
  const bool known = role == proto::BUILDER || role == proto::AGENT || role == proto::TUNER;
  return known ? LabelValue(MetricsRole(role)) : "unknown";
}

// The write side of one stream, shared between the reactor (which gRPC
// deletes in OnDone) and the Scheduler (which may hold the Outbox longer).
class StreamWriter final : public Outbox {
 public:
  explicit StreamWriter(Reactor* reactor, TrackerMetricsInterface* metrics)
      : reactor_(reactor), metrics_(metrics) {}

  void Send(proto::TrackerMessage message) override {
    absl::MutexLock lock(&mu_);
    if (reactor_ == nullptr || closing_ || failed_) return;
    queue_.push_back(std::move(message));
    if (metrics_ != nullptr) metrics_->MessageOut(role_);
    if (!writing_) {
      writing_ = true;
      reactor_->StartWrite(&queue_.front());
    }
  }

  void Close(const absl::Status& status) override {
    absl::MutexLock lock(&mu_);
    if (reactor_ == nullptr || closing_) return;
    closing_ = true;
    close_status_ = ToGrpc(status);
    if (!writing_) FinishLocked();
  }

  // Reactor callbacks.
  void WriteDone(bool ok) {
    absl::MutexLock lock(&mu_);
    if (!queue_.empty()) queue_.pop_front();
    if (!ok) {
      failed_ = true;
      queue_.clear();
    }
    if (!queue_.empty() && !closing_) {
      reactor_->StartWrite(&queue_.front());
      return;
    }
    writing_ = false;
    if (closing_) FinishLocked();
  }
  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
  }
  void set_role(WorkerRole role) {
    absl::MutexLock lock(&mu_);
    role_ = role;
  }

 private:
  void FinishLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || reactor_ == nullptr) return;
    finished_ = true;
    reactor_->Finish(close_status_);
  }

  absl::Mutex mu_;
  Reactor* reactor_ ABSL_GUARDED_BY(mu_);
  TrackerMetricsInterface* const metrics_;
  WorkerRole role_ ABSL_GUARDED_BY(mu_) = WorkerRole::kAgent;
  std::deque<proto::TrackerMessage> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status close_status_ ABSL_GUARDED_BY(mu_);
};

class WorkerStream final : public Reactor {
 public:
  WorkerStream(Scheduler* scheduler, TrackerMetricsInterface* metrics,
               grpc::CallbackServerContext* context)
      : scheduler_(scheduler),
        metrics_(metrics),
        peer_(context->peer()),
        writer_(std::make_shared<StreamWriter>(this, metrics)) {}

  // The caller's credentials, checked: refuses the stream, or starts
  // reading it. Called once, from any thread.
  void Authenticated(absl::StatusOr<Principal> auth) {
    auth_ = std::move(auth);
    if (!auth_.ok()) {
      if (metrics_ != nullptr) metrics_->Rejected("unauthenticated");
      TF_LOG(WARNING) << "refused a worker stream from " << peer_ << ": " << auth_.status();
      writer_->Close(auth_.status());
      return;
    }
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      if (!worker_id_.empty()) {
        scheduler_->OnDisconnect(worker_id_,
                                 absl::UnavailableError("the worker closed its stream"));
      }
      writer_->Close(absl::OkStatus());
      return;
    }
    if (worker_id_.empty()) {
      if (!Register()) return;
    } else {
      if (metrics_ != nullptr) metrics_->MessageIn(role_);
      scheduler_->OnMessage(worker_id_, in_);
    }
    StartRead(&in_);
  }

  void OnWriteDone(bool ok) override { writer_->WriteDone(ok); }

  void OnDone() override {
    writer_->Detach();
    delete this;
  }

 private:
  // Handles the first message; false when the stream was refused.
  bool Register() {
    if (in_.kind_case() != proto::WorkerMessage::kRegister) {
      Refuse(absl::InvalidArgumentError("the first message on a worker stream must be Register"));
      return false;
    }
    const proto::Register& reg = in_.register_();
    Action action = reg.role() == proto::BUILDER ? Action::kRegisterBuilder
                    : reg.role() == proto::AGENT ? Action::kRegisterAgent
                                                 : Action::kRegisterTuner;
    if (reg.role() != proto::BUILDER && reg.role() != proto::AGENT && reg.role() != proto::TUNER) {
      Refuse(absl::InvalidArgumentError("Register.role must be BUILDER, AGENT or TUNER"));
      return false;
    }
    if (!Allowed(auth_->role, action)) {
      if (metrics_ != nullptr) metrics_->Rejected("permission_denied");
      Refuse(absl::PermissionDeniedError(
          absl::StrCat("this token may not register a ", RoleLabel(reg.role()))));
      return false;
    }
    if (reg.role() == proto::AGENT) {
      if (absl::Status scoped = auth_->CheckDeviceKey(reg.device_key()); !scoped.ok()) {
        if (metrics_ != nullptr) metrics_->Rejected("device_key_scope");
        Refuse(scoped);
        return false;
      }
    }
    role_ = MetricsRole(reg.role());
    writer_->set_role(role_);
    absl::StatusOr<std::string> id = scheduler_->RegisterWorker(reg, peer_, writer_);
    if (!id.ok()) {
      Refuse(id.status());
      return false;
    }
    worker_id_ = *id;
    return true;
  }

  void Refuse(const absl::Status& status) {
    TF_LOG(WARNING) << "refused a worker stream from " << peer_ << ": " << status;
    proto::TrackerMessage m;
    m.mutable_error()->set_code(absl::StatusCodeToString(status.code()));
    m.mutable_error()->set_message(std::string(status.message()));
    m.mutable_error()->set_fatal(true);
    writer_->Send(std::move(m));
    writer_->Close(status);
  }

  Scheduler* const scheduler_;
  TrackerMetricsInterface* const metrics_;
  const std::string peer_;
  // Set once by Authenticated, before the first read.
  absl::StatusOr<Principal> auth_ = absl::UnauthenticatedError("not checked yet");
  std::shared_ptr<StreamWriter> writer_;
  proto::WorkerMessage in_;
  std::string worker_id_;
  WorkerRole role_ = WorkerRole::kAgent;
};

}  // namespace

WorkerGatewayService::WorkerGatewayService(Scheduler* scheduler, const TokenSet* tokens,
                                           TrackerMetricsInterface* metrics)
    : scheduler_(scheduler), tokens_(tokens), metrics_(metrics) {
  auth_thread_ = std::thread([this] { AuthLoop(); });
}

WorkerGatewayService::~WorkerGatewayService() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  auth_thread_.join();
}

void WorkerGatewayService::AuthLoop() {
  for (;;) {
    PendingAuth next;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !pending_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (pending_.empty()) return;  // stopping, and nothing waits
      next = std::move(pending_.front());
      pending_.pop_front();
    }
    next.done(AuthenticateCredentials(tokens_, next.call));
  }
}

Reactor* WorkerGatewayService::Connect(grpc::CallbackServerContext* context) {
  auto* stream = new WorkerStream(scheduler_, metrics_, context);
  PendingAuth pending{CredentialsOf(*context), [stream](absl::StatusOr<Principal> auth) {
                        stream->Authenticated(std::move(auth));
                      }};
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_ && pending_.size() < kMaxPendingAuth) {
      pending_.push_back(std::move(pending));
      return stream;
    }
  }
  stream->Authenticated(absl::ResourceExhaustedError(
      absl::StrCat("too many worker streams waiting for their token to be checked (",
                   kMaxPendingAuth, "); retry shortly")));
  return stream;
}

}  // namespace tunefleet
