#include "worker/fake_worker_gateway.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "worker/worker_connection.h"

namespace tunefleet {

FakeWorkerGateway::FakeWorkerGateway() {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
  builder.SetMaxReceiveMessageSize(kMaxWorkerMessageBytes);
  builder.SetMaxSendMessageSize(kMaxWorkerMessageBytes);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
}

FakeWorkerGateway::~FakeWorkerGateway() {
  server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
}

std::string FakeWorkerGateway::address() const { return absl::StrCat("127.0.0.1:", port_); }

grpc::Status FakeWorkerGateway::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<proto::TrackerMessage, proto::WorkerMessage>* stream) {
  proto::WorkerMessage message;
  if (!stream->Read(&message) || !message.has_register_()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected Register");
  }
  proto::TrackerMessage reply;
  {
    absl::MutexLock lock(&mu_);
    ++registrations_;
    last_registration_ = message.register_();
    auto it = context->client_metadata().find("authorization");
    last_authorization_ = it == context->client_metadata().end()
                              ? ""
                              : std::string(it->second.data(), it->second.size());
    reply.mutable_registered()->set_worker_id(absl::StrCat("worker-", registrations_));
    reply.mutable_registered()->set_heartbeat_interval_s(0.02);
  }
  stream->Write(reply);
  while (stream->Read(&message)) {
    std::vector<proto::TrackerMessage> outbox;
    {
      absl::MutexLock lock(&mu_);
      if (message.has_heartbeat()) {
        ++heartbeats_;
      } else {
        received_.push_back(message);
      }
      outbox.swap(outbox_);
    }
    for (const proto::TrackerMessage& out : outbox) stream->Write(out);
  }
  return grpc::Status::OK;
}

void FakeWorkerGateway::Enqueue(proto::TrackerMessage message) {
  absl::MutexLock lock(&mu_);
  outbox_.push_back(std::move(message));
}

int FakeWorkerGateway::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

proto::Register FakeWorkerGateway::last_registration() const {
  absl::MutexLock lock(&mu_);
  return last_registration_;
}

std::string FakeWorkerGateway::last_authorization() const {
  absl::MutexLock lock(&mu_);
  return last_authorization_;
}

int FakeWorkerGateway::heartbeats() const {
  absl::MutexLock lock(&mu_);
  return heartbeats_;
}

std::vector<proto::WorkerMessage> FakeWorkerGateway::received() const {
  absl::MutexLock lock(&mu_);
  return received_;
}

bool FakeWorkerGateway::WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

}  // namespace tunefleet
