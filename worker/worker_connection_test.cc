// WorkerConnection against an in-process fake WorkerGateway on loopback:
// registration with the bearer token, heartbeats, delivery both ways,
// reconnection after the tracker drops the stream, a refused registration,
// and a prompt Stop() while the tracker is unreachable or silent.
#include "worker/worker_connection.h"

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/fleet.grpc.pb.h"

namespace tunefleet {
namespace {

constexpr absl::Duration kWait = absl::Seconds(20);

// Polls `condition` until it holds or `timeout` passes (for state with no
// condition variable of its own, such as the connection's counters).
bool Eventually(const std::function<bool()>& condition, absl::Duration timeout = kWait) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return true;
}

// Stop() must return well within `bound`, however long the backoff.
bool StopsWithin(WorkerConnection& connection, std::chrono::seconds bound) {
  auto stopped = std::async(std::launch::async, [&connection] { connection.Stop(); });
  return stopped.wait_for(bound) == std::future_status::ready;
}

enum class GatewayMode { kRegister, kRefuse, kSilent };

class FakeGateway final : public proto::WorkerGateway::Service {
 public:
  explicit FakeGateway(GatewayMode mode) : mode_(mode) {}

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<proto::TrackerMessage, proto::WorkerMessage>* stream) override {
    {
      absl::MutexLock lock(&mu_);
      auto it = context->client_metadata().find("authorization");
      if (it != context->client_metadata().end()) {
        authorization_.assign(it->second.data(), it->second.size());
      }
    }
    proto::WorkerMessage message;
    if (!stream->Read(&message) || !message.has_register_()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "expected Register");
    }
    {
      absl::MutexLock lock(&mu_);
      ++registers_seen_;
    }
    proto::TrackerMessage reply;
    switch (mode_) {
      case GatewayMode::kSilent:
        while (stream->Read(&message)) {
        }
        return grpc::Status::OK;
      case GatewayMode::kRefuse: {
        absl::MutexLock lock(&mu_);
        ++refusals_;
        reply.mutable_error()->set_code("PERMISSION_DENIED");
        reply.mutable_error()->set_message("name taken");
        reply.mutable_error()->set_fatal(true);
        break;
      }
      case GatewayMode::kRegister: {
        absl::MutexLock lock(&mu_);
        ++registrations_;
        registration_ = message.register_();
        reply.mutable_registered()->set_worker_id(absl::StrCat("worker-", registrations_));
        reply.mutable_registered()->set_heartbeat_interval_s(0.02);
        break;
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
    return grpc::Status::OK;
  }

  // Sent on the current stream after the next message (heartbeat) arrives.
  void Enqueue(proto::TrackerMessage message) {
    absl::MutexLock lock(&mu_);
    outbox_.push_back(std::move(message));
  }
  // Ends the current stream with an error after the next message arrives.
  void DropStream() {
    absl::MutexLock lock(&mu_);
    drop_ = true;
  }

  int registers_seen() const {
    absl::MutexLock lock(&mu_);
    return registers_seen_;
  }
  int registrations() const {
    absl::MutexLock lock(&mu_);
    return registrations_;
  }
  int refusals() const {
    absl::MutexLock lock(&mu_);
    return refusals_;
  }
  int heartbeats() const {
    absl::MutexLock lock(&mu_);
    return heartbeats_;
  }
  std::string authorization() const {
    absl::MutexLock lock(&mu_);
    return authorization_;
  }
  proto::Register registration() const {
    absl::MutexLock lock(&mu_);
    return registration_;
  }
  std::vector<proto::WorkerMessage> received() const {
    absl::MutexLock lock(&mu_);
    return received_;
  }

 private:
  const GatewayMode mode_;
  mutable absl::Mutex mu_;
  int registers_seen_ ABSL_GUARDED_BY(mu_) = 0;
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  int refusals_ ABSL_GUARDED_BY(mu_) = 0;
  int heartbeats_ ABSL_GUARDED_BY(mu_) = 0;
  std::string authorization_ ABSL_GUARDED_BY(mu_);
  proto::Register registration_ ABSL_GUARDED_BY(mu_);
  std::vector<proto::WorkerMessage> received_ ABSL_GUARDED_BY(mu_);
  std::vector<proto::TrackerMessage> outbox_ ABSL_GUARDED_BY(mu_);
  bool drop_ ABSL_GUARDED_BY(mu_) = false;
};

class FakeTracker {
 public:
  explicit FakeTracker(GatewayMode mode) : gateway_(mode) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&gateway_);
    server_ = builder.BuildAndStart();
  }
  ~FakeTracker() { Shutdown(); }
  void Shutdown() {
    if (server_ != nullptr) server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    server_.reset();
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int port() const { return port_; }
  FakeGateway& gateway() { return gateway_; }

 private:
  FakeGateway gateway_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

WorkerConnectionOptions Options(const std::string& address) {
  WorkerConnectionOptions options;
  options.tracker_address = address;
  options.token = "secret-token";
  options.registration.set_role(proto::AGENT);
  options.registration.set_name("agent-test-0");
  options.registration.set_device_key("x86-test");
  options.initial_backoff_s = 0.01;
  options.max_backoff_s = 0.05;
  return options;
}

// What the connection hands to its handlers, for the test to wait on.
class Inbox {
 public:
  WorkerConnection::MessageHandler MessageHandler() {
    return [this](const proto::TrackerMessage& message) {
      absl::MutexLock lock(&mu_);
      messages_.push_back(message);
    };
  }
  WorkerConnection::SessionHandler SessionHandler() {
    return [this](const std::string& worker_id) {
      absl::MutexLock lock(&mu_);
      sessions_.push_back(worker_id);
    };
  }
  std::vector<proto::TrackerMessage> messages() const {
    absl::MutexLock lock(&mu_);
    return messages_;
  }
  std::vector<std::string> sessions() const {
    absl::MutexLock lock(&mu_);
    return sessions_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<proto::TrackerMessage> messages_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> sessions_ ABSL_GUARDED_BY(mu_);
};

TEST(WorkerConnectionTest, SendFailsBeforeAnySession) {
  WorkerConnection connection(Options("127.0.0.1:1"), nullptr);
  proto::WorkerMessage message;
  message.mutable_heartbeat()->set_sent_at(1);
  EXPECT_FALSE(connection.Send(message));
  EXPECT_FALSE(connection.connected());
  EXPECT_EQ(connection.worker_id(), "");
}

TEST(WorkerConnectionTest, RegistersHeartbeatsDeliversBothWaysAndReconnectsAfterADrop) {
  FakeTracker tracker(GatewayMode::kRegister);
  Inbox inbox;
  WorkerConnection connection(Options(tracker.address()), inbox.MessageHandler(),
                              inbox.SessionHandler());
  connection.Start();

  ASSERT_TRUE(Eventually([&] { return connection.connected(); }));
  EXPECT_EQ(connection.sessions(), 1);
  EXPECT_EQ(connection.worker_id(), "worker-1");
  EXPECT_EQ(tracker.gateway().authorization(), "Bearer secret-token");
  EXPECT_EQ(tracker.gateway().registration().name(), "agent-test-0");
  EXPECT_EQ(tracker.gateway().registration().role(), proto::AGENT);
  // The tracker asked for 20 ms heartbeats.
  ASSERT_TRUE(Eventually([&] { return tracker.gateway().heartbeats() >= 3; }));

  // Tracker -> worker.
  proto::TrackerMessage work;
  work.mutable_measure()->set_lease_id("lease-1");
  tracker.gateway().Enqueue(work);
  ASSERT_TRUE(Eventually([&] { return !inbox.messages().empty(); }));
  ASSERT_EQ(inbox.messages().size(), 1u);
  EXPECT_EQ(inbox.messages()[0].measure().lease_id(), "lease-1");

  // Worker -> tracker.
  proto::WorkerMessage result;
  result.mutable_measure_result()->set_lease_id("lease-1");
  ASSERT_TRUE(connection.Send(result));
  ASSERT_TRUE(Eventually([&] { return !tracker.gateway().received().empty(); }));
  EXPECT_EQ(tracker.gateway().received()[0].measure_result().lease_id(), "lease-1");

  // The tracker drops the stream with an error: the worker dials again and
  // registers a new session.
  tracker.gateway().DropStream();
  ASSERT_TRUE(Eventually([&] { return connection.sessions() == 2 && connection.connected(); }));
  EXPECT_EQ(connection.worker_id(), "worker-2");
  EXPECT_EQ(tracker.gateway().registrations(), 2);
  EXPECT_EQ(inbox.sessions(), (std::vector<std::string>{"worker-1", "worker-2"}));
  EXPECT_GE(connection.failures(), 1);

  // Stop() while the reader is blocked in Read.
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(10)));
  EXPECT_FALSE(connection.connected());
  EXPECT_FALSE(connection.Send(result));
  connection.Stop();  // idempotent
}

TEST(WorkerConnectionTest, RefusedRegistrationIsRetriedWithBackoff) {
  FakeTracker tracker(GatewayMode::kRefuse);
  Inbox inbox;
  WorkerConnection connection(Options(tracker.address()), inbox.MessageHandler());
  connection.Start();
  ASSERT_TRUE(Eventually([&] { return tracker.gateway().refusals() >= 2; }));
  EXPECT_FALSE(connection.connected());
  EXPECT_EQ(connection.sessions(), 0);
  EXPECT_TRUE(inbox.messages().empty());
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(10)));
}

TEST(WorkerConnectionTest, StopIsPromptWhileTheTrackerIsUnreachable) {
  std::string address;
  {
    FakeTracker gone(GatewayMode::kRegister);
    address = gone.address();  // nothing listens there once it is shut down
  }
  WorkerConnectionOptions options = Options(address);
  options.initial_backoff_s = 60;  // the first failure starts a 30-90 s wait
  options.max_backoff_s = 60;
  WorkerConnection connection(options, nullptr);
  connection.Start();
  ASSERT_TRUE(Eventually([&] { return connection.failures() >= 1; }));
  EXPECT_FALSE(connection.connected());
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(10)));
}

TEST(WorkerConnectionTest, StopIsPromptWhileWaitingForRegistered) {
  FakeTracker tracker(GatewayMode::kSilent);
  WorkerConnection connection(Options(tracker.address()), nullptr);
  connection.Start();
  ASSERT_TRUE(Eventually([&] { return tracker.gateway().registers_seen() == 1; }));
  EXPECT_FALSE(connection.connected());
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(10)));
  EXPECT_EQ(connection.sessions(), 0);
}

TEST(MakeTlsCredentialsTest, PlaintextOrClearErrors) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> none = MakeTlsCredentials("", "", "");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  EXPECT_EQ(MakeTlsCredentials("", "cert.pem", "key.pem").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeTlsCredentials("ca.pem", "cert.pem", "").status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> missing =
      MakeTlsCredentials("/nonexistent/ca.pem", "", "");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/ca.pem"), std::string::npos);
}

}  // namespace
}  // namespace tunefleet
