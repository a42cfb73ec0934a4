#include "worker_stream/fake_worker_gateway.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"
#include "worker_stream/worker_connection.h"

namespace tunefleet {

FakeWorkerGateway::FakeWorkerGateway(Mode mode) : mode_(mode) {
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
  {
    absl::MutexLock lock(&mu_);
    ++registers_seen_;
    auto it = context->client_metadata().find("authorization");
    last_authorization_ = it == context->client_metadata().end()
                              ? ""
                              : std::string(it->second.data(), it->second.size());
  }
  if (mode_ == Mode::kSilent) {
    while (stream->Read(&message)) {
    }
    return grpc::Status::OK;
  }
  proto::TrackerMessage reply;
  {
    absl::MutexLock lock(&mu_);
    if (mode_ == Mode::kRefuse) {
      ++refusals_;
      reply.mutable_error()->set_code("PERMISSION_DENIED");
      reply.mutable_error()->set_message("name taken");
      reply.mutable_error()->set_fatal(true);
    } else {
      ++registrations_;
      last_registration_ = message.register_();
      reply.mutable_registered()->set_worker_id(absl::StrCat("worker-", registrations_));
      reply.mutable_registered()->set_heartbeat_interval_s(0.02);
      for (const std::string& key : builder_keys_)
        reply.mutable_registered()->add_builder_keys(key);
    }
  }
  stream->Write(reply);
  while (stream->Read(&message)) {
    std::vector<proto::TrackerMessage> outbox;
    bool drop = false;
    {
      absl::MutexLock lock(&mu_);
      if (message.has_heartbeat()) {
        ++heartbeats_;
      } else {
        received_.push_back(message);
      }
      outbox.swap(outbox_);
      std::swap(drop, drop_);
    }
    for (const proto::TrackerMessage& out : outbox) stream->Write(out);
    if (drop) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "fake tracker drops the stream");
  }
  while (mode_ == Mode::kKeepOpen && !context->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
  return grpc::Status::OK;
}

void FakeWorkerGateway::Enqueue(proto::TrackerMessage message) {
  absl::MutexLock lock(&mu_);
  outbox_.push_back(std::move(message));
}

void FakeWorkerGateway::SetBuilderKeys(std::vector<std::string> keys) {
  absl::MutexLock lock(&mu_);
  builder_keys_ = std::move(keys);
}

void FakeWorkerGateway::DropStream() {
  absl::MutexLock lock(&mu_);
  drop_ = true;
}

int FakeWorkerGateway::registers_seen() const {
  absl::MutexLock lock(&mu_);
  return registers_seen_;
}

int FakeWorkerGateway::refusals() const {
  absl::MutexLock lock(&mu_);
  return refusals_;
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
  const Stopwatch waited;
  while (!condition()) {
    if (waited.ElapsedSeconds() > absl::ToDoubleSeconds(timeout)) return false;
    SystemClock().SleepSeconds(0.005);
  }
  return true;
}

}  // namespace tunefleet
