// WorkerDaemon against FakeWorkerGateway on loopback, with a fake role that
// holds its work until the test answers it: registration, delivery both
// ways, and the drain on Stop() (no new work taken, work in hand answered,
// bounded by drain_timeout_s).
#include "worker/worker_daemon.h"

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "proto/fleet.pb.h"
#include "worker/fake_worker_gateway.h"

namespace tunefleet {
namespace {

// Takes BuildRequests and answers them only when the test says so.
class HoldingRole final : public WorkerRoleInterface {
 public:
  void set_daemon(WorkerDaemon* daemon) { daemon_ = daemon; }

  void OnMessage(const proto::TrackerMessage& message) override {
    absl::MutexLock lock(&mu_);
    if (message.has_build()) held_.push_back(message.build().lease_id());
    ++messages_;
  }
  void OnSession(const std::string&) override {
    absl::MutexLock lock(&mu_);
    held_.clear();
  }
  int64_t InFlight() const override {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(held_.size());
  }

  // Answers the oldest held request (sent before it stops counting, as
  // the real roles do).
  void AnswerOne() {
    proto::WorkerMessage result;
    {
      absl::MutexLock lock(&mu_);
      ASSERT_FALSE(held_.empty());
      result.mutable_build_result()->set_lease_id(held_.front());
    }
    daemon_->Send(result);
    absl::MutexLock lock(&mu_);
    held_.erase(held_.begin());
  }
  int messages() const {
    absl::MutexLock lock(&mu_);
    return messages_;
  }

 private:
  WorkerDaemon* daemon_ = nullptr;
  mutable absl::Mutex mu_;
  std::vector<std::string> held_ ABSL_GUARDED_BY(mu_);
  int messages_ ABSL_GUARDED_BY(mu_) = 0;
};

proto::TrackerMessage Build(const std::string& lease_id) {
  proto::TrackerMessage message;
  message.mutable_build()->set_lease_id(lease_id);
  return message;
}

WorkerDaemonOptions Options(const FakeWorkerGateway& tracker, double drain_timeout_s) {
  WorkerDaemonOptions options;
  options.tracker_address = tracker.address();
  options.token = "secret";
  options.name = "builder-test";
  options.drain_timeout_s = drain_timeout_s;
  return options;
}

proto::Register BuilderRegistration() {
  proto::Register registration;
  registration.set_role(proto::BUILDER);
  registration.set_parallelism(2);
  return registration;
}

TEST(WorkerDaemonOptionsTest, RefusesMissingAddressNameAndNegativeDrain) {
  WorkerDaemonOptions options;
  options.name = "w";
  EXPECT_EQ(options.Validate().code(), absl::StatusCode::kInvalidArgument);
  options.tracker_address = "127.0.0.1:1";
  options.name.clear();
  EXPECT_EQ(options.Validate().code(), absl::StatusCode::kInvalidArgument);
  options.name = "w";
  options.drain_timeout_s = -1;
  EXPECT_EQ(options.Validate().code(), absl::StatusCode::kInvalidArgument);
  options.drain_timeout_s = 0;
  EXPECT_TRUE(options.Validate().ok());
}

TEST(WorkerDaemonTest, RegistersWithItsNameAndPassesWorkBothWays) {
  FakeWorkerGateway tracker;
  HoldingRole role;
  WorkerDaemon daemon(Options(tracker, 5), BuilderRegistration(), &role);
  role.set_daemon(&daemon);
  daemon.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.connection().connected(); }));
  EXPECT_EQ(tracker.last_registration().name(), "builder-test");
  EXPECT_EQ(tracker.last_registration().role(), proto::BUILDER);
  EXPECT_EQ(tracker.last_authorization(), "Bearer secret");

  tracker.Enqueue(Build("lease-1"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return role.InFlight() == 1; }));
  role.AnswerOne();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.received().size() == 1; }));
  EXPECT_EQ(tracker.received()[0].build_result().lease_id(), "lease-1");
  EXPECT_EQ(daemon.Stop(), 0);
}

TEST(WorkerDaemonTest, DrainTakesNoNewWorkAndAnswersWhatItHoldsBeforeDisconnecting) {
  FakeWorkerGateway tracker;
  HoldingRole role;
  WorkerDaemon daemon(Options(tracker, 60), BuilderRegistration(), &role);
  role.set_daemon(&daemon);
  daemon.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.connection().connected(); }));
  tracker.Enqueue(Build("held"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return role.InFlight() == 1; }));

  std::future<int64_t> stopped =
      std::async(std::launch::async, [&daemon] { return daemon.Stop(); });
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.draining(); }));
  // New work while draining never reaches the role...
  tracker.Enqueue(Build("refused"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.refused_while_draining() == 1; }));
  EXPECT_EQ(role.InFlight(), 1);
  // ... the stream stays up while work is in hand ...
  EXPECT_TRUE(daemon.connection().connected());
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  // ... and its answer still reaches the tracker, after which Stop() returns.
  role.AnswerOne();
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(stopped.get(), 0);
  ASSERT_EQ(tracker.received().size(), 1u);
  EXPECT_EQ(tracker.received()[0].build_result().lease_id(), "held");
  EXPECT_FALSE(daemon.connection().connected());
}

TEST(WorkerDaemonTest, DrainGivesUpAfterItsTimeoutAndReportsWhatWasUnanswered) {
  FakeWorkerGateway tracker;
  HoldingRole role;
  WorkerDaemon daemon(Options(tracker, 0.05), BuilderRegistration(), &role);
  role.set_daemon(&daemon);
  daemon.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.connection().connected(); }));
  tracker.Enqueue(Build("a"));
  tracker.Enqueue(Build("b"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return role.InFlight() == 2; }));

  std::future<int64_t> stopped =
      std::async(std::launch::async, [&daemon] { return daemon.Stop(); });
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(stopped.get(), 2);
  EXPECT_FALSE(daemon.connection().connected());
  EXPECT_TRUE(tracker.received().empty());
  EXPECT_EQ(daemon.Stop(), 0);  // idempotent
}

TEST(WorkerDaemonTest, StopWithNothingInHandDisconnectsAtOnce) {
  FakeWorkerGateway tracker;
  HoldingRole role;
  WorkerDaemon daemon(Options(tracker, 3600), BuilderRegistration(), &role);
  role.set_daemon(&daemon);
  daemon.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.connection().connected(); }));
  std::future<int64_t> stopped =
      std::async(std::launch::async, [&daemon] { return daemon.Stop(); });
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(stopped.get(), 0);
}

TEST(IsNewWorkTest, LeasesAndAssignmentsAreNewWorkUpdatesAreNot) {
  proto::TrackerMessage message;
  message.mutable_build();
  EXPECT_TRUE(IsNewWork(message));
  message.mutable_measure();
  EXPECT_TRUE(IsNewWork(message));
  message.mutable_assignment();
  EXPECT_TRUE(IsNewWork(message));
  message.mutable_trial_update();
  EXPECT_FALSE(IsNewWork(message));
  message.mutable_released();
  EXPECT_FALSE(IsNewWork(message));
}

}  // namespace
}  // namespace tunefleet
