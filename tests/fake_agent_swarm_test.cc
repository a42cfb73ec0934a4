// FakeAgentSwarm against FakeWorkerGateway: every agent registers under its
// own name, heartbeats, answers a measurement with the simulated cost, dials
// again when its stream is dropped or refused, and Stop ends every stream.
#include "tests/fake_agent_swarm.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker_stream/fake_worker_gateway.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

FakeAgentSwarmOptions Options(const FakeWorkerGateway& tracker, int agents) {
  FakeAgentSwarmOptions options;
  options.tracker_address = tracker.address();
  options.token = "tf_swarm_token";
  options.device_key = "sim";
  options.name = "swarm";
  options.agents = agents;
  options.connections = 2;
  options.measure_s = 0.005;
  options.initial_backoff_s = 0.01;
  options.max_backoff_s = 0.05;
  return options;
}

TEST(FakeAgentSwarmTest, AgentsRegisterMeasureAndRedial) {
  FakeWorkerGateway tracker;
  const FakeAgentSwarmOptions options = Options(tracker, 5);
  ASSERT_TRUE(options.Validate().ok());
  FakeAgentSwarm swarm(options, proto::DeviceInfo());
  swarm.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return swarm.registered() == 5; }));
  EXPECT_EQ(tracker.registrations(), 5);
  EXPECT_EQ(tracker.last_registration().role(), proto::AGENT);
  EXPECT_EQ(tracker.last_registration().device_key(), "sim");
  EXPECT_THAT(tracker.last_registration().name(), ::testing::StartsWith("swarm-"));
  EXPECT_EQ(tracker.last_authorization(), "Bearer tf_swarm_token");
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.heartbeats() >= 5; }));

  proto::TrackerMessage work;
  work.mutable_measure()->set_lease_id("sim-1");
  work.mutable_measure()->mutable_run()->mutable_options()->set_repeat(3);
  tracker.Enqueue(work);
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return !tracker.received().empty(); }));
  const proto::MeasureResult result = tracker.received()[0].measure_result();
  EXPECT_EQ(result.lease_id(), "sim-1");
  EXPECT_EQ(result.run().error_no(), 0);
  EXPECT_THAT(result.run().costs(), ElementsAre(0.005));  // 3 repeats, trimmed once
  EXPECT_GT(result.measure_seconds(), 0.0);
  EXPECT_EQ(swarm.measured(), 1);

  // A dropped stream's agent dials again and registers a new session.
  tracker.DropStream();
  ASSERT_TRUE(
      FakeWorkerGateway::WaitFor([&] { return swarm.sessions() == 6 && swarm.registered() == 5; }));
  EXPECT_EQ(tracker.registrations(), 6);

  swarm.Stop();
  EXPECT_EQ(swarm.registered(), 0);
}

TEST(FakeAgentSwarmTest, RefusedAgentsKeepTryingWithBackoff) {
  FakeWorkerGateway tracker(FakeWorkerGateway::Mode::kRefuse);
  FakeAgentSwarm swarm(Options(tracker, 3), proto::DeviceInfo());
  swarm.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.refusals() >= 9; }));
  EXPECT_EQ(swarm.registered(), 0);
  EXPECT_EQ(swarm.sessions(), 0);
  swarm.Stop();
}

TEST(FakeAgentSwarmOptionsTest, NamesWhatIsWrong) {
  FakeAgentSwarmOptions options;
  options.tracker_address = "127.0.0.1:1";
  EXPECT_THAT(options.Validate().message(), ::testing::HasSubstr("device key"));
  options.device_key = "sim";
  options.agents = 0;
  EXPECT_THAT(options.Validate().message(), ::testing::HasSubstr("agents"));
  options.agents = 2;
  options.measure_s = 0;
  EXPECT_THAT(options.Validate().message(), ::testing::HasSubstr("measure time"));
  options.measure_s = 0.1;
  EXPECT_TRUE(options.Validate().ok());
}

}  // namespace
}  // namespace tunefleet
