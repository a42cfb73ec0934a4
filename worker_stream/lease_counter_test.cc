// LeaseCounter: leases taken count until answered or dropped; an answer is
// sent (here with no session, so dropped by the daemon) before it stops
// counting.
#include "worker_stream/lease_counter.h"

#include "gtest/gtest.h"
#include "worker_stream/fake_worker_gateway.h"

namespace tunefleet {
namespace {

class NoRole final : public WorkerRoleInterface {
 public:
  void OnMessage(const proto::TrackerMessage&) override {}
  void OnSession(const proto::Registered&) override {}
  int64_t InFlight() const override { return 0; }
};

TEST(LeaseCounterTest, CountsTakenLeasesUntilAnsweredOrDropped) {
  FakeWorkerGateway tracker;
  NoRole role;
  WorkerDaemonOptions options;
  options.tracker_address = tracker.address();
  options.name = "counter-test";
  WorkerDaemon worker(options, proto::Register(), &role);  // not started: no session

  LeaseCounter leases;
  EXPECT_EQ(leases.count(), 0);
  leases.Took();
  leases.Took();
  leases.Took();
  EXPECT_EQ(leases.count(), 3);
  proto::WorkerMessage answer;
  answer.mutable_build_result()->set_lease_id("l");
  EXPECT_FALSE(leases.Answer(worker, answer));  // no session: dropped, still answered
  EXPECT_EQ(leases.count(), 2);
  leases.Dropped(0, "w2", "builds");
  EXPECT_EQ(leases.count(), 2);
  leases.Dropped(2, "w2", "builds");
  EXPECT_EQ(leases.count(), 0);
}

}  // namespace
}  // namespace tunefleet
