// WorkerDaemon against FakeWorkerGateway on loopback, with a fake role that
// holds its work until the test answers it: registration, delivery both
// ways, and the drain on Stop() (no new work taken, work in hand answered,
// bounded by drain_timeout_s).
#include "worker_stream/worker_daemon.h"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "proto/fleet.pb.h"
#include "worker_stream/fake_worker_gateway.h"

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
  void OnSession(const proto::Registered&) override {
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

// A daemon with a HoldingRole against a FakeWorkerGateway, as every
// WorkerDaemonTest starts.
class WorkerDaemonTest : public ::testing::Test {
 protected:
  // Starts daemon_ (drain bounded by `drain_timeout_s`) and waits until its
  // stream is up.
  void StartConnected(double drain_timeout_s) {
    daemon_ = std::make_unique<WorkerDaemon>(Options(tracker_, drain_timeout_s),
                                             BuilderRegistration(), &role_);
    role_.set_daemon(daemon_.get());
    daemon_->Start();
    ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon_->connection().connected(); }));
  }
  // daemon_->Stop() on another thread, so the test can act while it drains.
  std::future<int64_t> StopAsync() {
    return std::async(std::launch::async, [this] { return daemon_->Stop(); });
  }

  FakeWorkerGateway tracker_;
  HoldingRole role_;
  std::unique_ptr<WorkerDaemon> daemon_;
};

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

TEST_F(WorkerDaemonTest, RegistersWithItsNameAndPassesWorkBothWays) {
  ASSERT_NO_FATAL_FAILURE(StartConnected(5));
  EXPECT_EQ(tracker_.last_registration().name(), "builder-test");
  EXPECT_EQ(tracker_.last_registration().role(), proto::BUILDER);
  EXPECT_EQ(tracker_.last_authorization(), "Bearer secret");

  tracker_.Enqueue(Build("lease-1"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return role_.InFlight() == 1; }));
  role_.AnswerOne();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker_.received().size() == 1; }));
  EXPECT_EQ(tracker_.received()[0].build_result().lease_id(), "lease-1");
  EXPECT_EQ(daemon_->Stop(), 0);
}

TEST_F(WorkerDaemonTest, DrainTakesNoNewWorkAndAnswersWhatItHoldsBeforeDisconnecting) {
  ASSERT_NO_FATAL_FAILURE(StartConnected(60));
  tracker_.Enqueue(Build("held"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return role_.InFlight() == 1; }));

  std::future<int64_t> stopped = StopAsync();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon_->draining(); }));
  // New work while draining never reaches the role...
  tracker_.Enqueue(Build("refused"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon_->refused_while_draining() == 1; }));
  EXPECT_EQ(role_.InFlight(), 1);
  // ... the stream stays up while work is in hand ...
  EXPECT_TRUE(daemon_->connection().connected());
  EXPECT_EQ(stopped.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  // ... and its answer still reaches the tracker, after which Stop() returns.
  role_.AnswerOne();
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(stopped.get(), 0);
  ASSERT_EQ(tracker_.received().size(), 1u);
  EXPECT_EQ(tracker_.received()[0].build_result().lease_id(), "held");
  EXPECT_FALSE(daemon_->connection().connected());
}

TEST_F(WorkerDaemonTest, DrainGivesUpAfterItsTimeoutAndReportsWhatWasUnanswered) {
  ASSERT_NO_FATAL_FAILURE(StartConnected(0.05));
  tracker_.Enqueue(Build("a"));
  tracker_.Enqueue(Build("b"));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return role_.InFlight() == 2; }));

  std::future<int64_t> stopped = StopAsync();
  ASSERT_EQ(stopped.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(stopped.get(), 2);
  EXPECT_FALSE(daemon_->connection().connected());
  EXPECT_TRUE(tracker_.received().empty());
  EXPECT_EQ(daemon_->Stop(), 0);  // idempotent
}

TEST_F(WorkerDaemonTest, StopWithNothingInHandDisconnectsAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartConnected(3600));
  std::future<int64_t> stopped = StopAsync();
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
