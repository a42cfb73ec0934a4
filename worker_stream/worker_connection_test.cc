// WorkerConnection against FakeWorkerGateway on loopback:
// registration with the bearer token, heartbeats, delivery both ways,
// reconnection after the tracker drops the stream, a refused registration,
// a prompt Stop() while the tracker is unreachable or silent, and one that
// lets the tracker read what was sent before it.
#include "worker_stream/worker_connection.h"

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/fleet.grpc.pb.h"
#include "worker_stream/fake_worker_gateway.h"

namespace tunefleet {
namespace {

constexpr absl::Duration kWait = absl::Seconds(20);

// Polls `condition` until it holds or kWait passes (for state with no
// condition variable of its own, such as the connection's counters).
bool Eventually(const std::function<bool()>& condition) {
  return FakeWorkerGateway::WaitFor(condition, kWait);
}

// Stop() must return well within `bound`, however long the backoff.
bool StopsWithin(WorkerConnection& connection, std::chrono::seconds bound) {
  auto stopped = std::async(std::launch::async, [&connection] { connection.Stop(); });
  return stopped.wait_for(bound) == std::future_status::ready;
}

using GatewayMode = FakeWorkerGateway::Mode;

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
    return [this](const proto::Registered& registered) {
      absl::MutexLock lock(&mu_);
      sessions_.push_back(registered.worker_id());
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
  FakeWorkerGateway tracker(GatewayMode::kRegister);
  Inbox inbox;
  WorkerConnection connection(Options(tracker.address()), inbox.MessageHandler(),
                              inbox.SessionHandler());
  connection.Start();

  ASSERT_TRUE(Eventually([&] { return connection.connected(); }));
  EXPECT_EQ(connection.sessions(), 1);
  EXPECT_EQ(connection.worker_id(), "worker-1");
  EXPECT_EQ(tracker.last_authorization(), "Bearer secret-token");
  EXPECT_EQ(tracker.last_registration().name(), "agent-test-0");
  EXPECT_EQ(tracker.last_registration().role(), proto::AGENT);
  // The tracker asked for 20 ms heartbeats.
  ASSERT_TRUE(Eventually([&] { return tracker.heartbeats() >= 3; }));

  // Tracker -> worker.
  proto::TrackerMessage work;
  work.mutable_measure()->set_lease_id("lease-1");
  tracker.Enqueue(work);
  ASSERT_TRUE(Eventually([&] { return !inbox.messages().empty(); }));
  ASSERT_EQ(inbox.messages().size(), 1u);
  EXPECT_EQ(inbox.messages()[0].measure().lease_id(), "lease-1");

  // Worker -> tracker.
  proto::WorkerMessage result;
  result.mutable_measure_result()->set_lease_id("lease-1");
  ASSERT_TRUE(connection.Send(result));
  ASSERT_TRUE(Eventually([&] { return !tracker.received().empty(); }));
  EXPECT_EQ(tracker.received()[0].measure_result().lease_id(), "lease-1");

  // The tracker drops the stream with an error: the worker dials again and
  // registers a new session.
  tracker.DropStream();
  ASSERT_TRUE(Eventually([&] { return connection.sessions() == 2 && connection.connected(); }));
  EXPECT_EQ(connection.worker_id(), "worker-2");
  EXPECT_EQ(tracker.registrations(), 2);
  EXPECT_EQ(inbox.sessions(), (std::vector<std::string>{"worker-1", "worker-2"}));
  EXPECT_GE(connection.failures(), 1);

  // Stop() while the reader is blocked in Read.
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(10)));
  EXPECT_FALSE(connection.connected());
  EXPECT_FALSE(connection.Send(result));
  connection.Stop();  // idempotent
}

// A result given to Send with no session is written once one registers, and
// a result written just before a break is written again on the next session
// (a tracker that counted it ignores it; one that took over adopts it);
// other messages are not kept.
TEST(WorkerConnectionTest, ResultsAreWrittenAgainOnTheNextSession) {
  FakeWorkerGateway tracker(GatewayMode::kRegister);
  Inbox inbox;
  WorkerConnection connection(Options(tracker.address()), inbox.MessageHandler(),
                              inbox.SessionHandler());
  proto::WorkerMessage early;
  early.mutable_build_result()->set_lease_id("lease-0");
  EXPECT_FALSE(connection.Send(early));
  proto::WorkerMessage calibration;
  calibration.mutable_calibration();
  EXPECT_FALSE(connection.Send(calibration));
  connection.Start();
  ASSERT_TRUE(Eventually([&] { return tracker.received().size() == 1; }));
  EXPECT_EQ(tracker.received()[0].build_result().lease_id(), "lease-0");
  EXPECT_EQ(connection.results_resent(), 1);

  proto::WorkerMessage result;
  result.mutable_measure_result()->set_lease_id("lease-1");
  ASSERT_TRUE(connection.Send(result));
  ASSERT_TRUE(Eventually([&] { return tracker.received().size() == 2; }));
  tracker.DropStream();
  ASSERT_TRUE(Eventually([&] { return tracker.received().size() == 4; }));
  std::vector<std::string> leases;
  for (const proto::WorkerMessage& m : tracker.received()) {
    leases.push_back(m.has_build_result() ? m.build_result().lease_id()
                                          : m.measure_result().lease_id());
  }
  EXPECT_EQ(leases, (std::vector<std::string>{"lease-0", "lease-1", "lease-0", "lease-1"}));
  EXPECT_EQ(connection.results_resent(), 3);
  connection.Stop();
}

TEST(WorkerConnectionTest, RefusedRegistrationIsRetriedWithBackoff) {
  FakeWorkerGateway tracker(GatewayMode::kRefuse);
  Inbox inbox;
  WorkerConnection connection(Options(tracker.address()), inbox.MessageHandler());
  connection.Start();
  ASSERT_TRUE(Eventually([&] { return tracker.refusals() >= 2; }));
  EXPECT_FALSE(connection.connected());
  EXPECT_EQ(connection.sessions(), 0);
  EXPECT_TRUE(inbox.messages().empty());
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(10)));
}

TEST(WorkerConnectionTest, StopIsPromptWhileTheTrackerIsUnreachable) {
  std::string address;
  {
    FakeWorkerGateway gone(GatewayMode::kRegister);
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
  FakeWorkerGateway tracker(GatewayMode::kSilent);
  WorkerConnection connection(Options(tracker.address()), nullptr);
  connection.Start();
  ASSERT_TRUE(Eventually([&] { return tracker.registers_seen() == 1; }));
  EXPECT_FALSE(connection.connected());
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(10)));
  EXPECT_EQ(connection.sessions(), 0);
}

// Stop() right after a Send() (a draining worker's last answer) must not
// cancel the message away: Stop() returns once the tracker has read it.
TEST(WorkerConnectionTest, AResultSentJustBeforeStopReachesTheTracker) {
  FakeWorkerGateway tracker(GatewayMode::kRegister);
  for (int i = 0; i < 20; ++i) {
    WorkerConnection connection(Options(tracker.address()), nullptr);
    connection.Start();
    ASSERT_TRUE(Eventually([&] { return connection.connected(); }));
    proto::WorkerMessage result;
    result.mutable_build_result()->set_lease_id(absl::StrCat("lease-", i));
    ASSERT_TRUE(connection.Send(result));
    connection.Stop();
    const std::vector<proto::WorkerMessage> received = tracker.received();
    ASSERT_EQ(received.size(), static_cast<size_t>(i + 1)) << "round " << i;
    EXPECT_EQ(received.back().build_result().lease_id(), absl::StrCat("lease-", i));
    EXPECT_FALSE(connection.connected());
  }
}

// A tracker that does not end a half-closed stream: Stop() cancels it.
TEST(WorkerConnectionTest, StopCancelsASessionTheTrackerDoesNotEnd) {
  FakeWorkerGateway tracker(GatewayMode::kKeepOpen);
  WorkerConnection connection(Options(tracker.address()), nullptr);
  connection.Start();
  ASSERT_TRUE(Eventually([&] { return connection.connected(); }));
  EXPECT_TRUE(StopsWithin(connection, std::chrono::seconds(30)));
  EXPECT_FALSE(connection.connected());
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
