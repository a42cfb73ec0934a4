// FakeAgent against FakeWorkerGateway: it registers as an agent and answers
// each measurement with the simulated cost, one `repeat` each, without
// asking for artifact bytes.
#include "tests/fake_agent.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "worker_stream/fake_worker_gateway.h"

namespace tunefleet {
namespace {

using ::testing::ElementsAre;

TEST(FakeAgentTest, RegistersAndAnswersTheSimulatedCostWithoutBytes) {
  FakeWorkerGateway tracker;
  FakeAgentOptions options;
  options.worker.tracker_address = tracker.address();
  options.worker.name = "fake-0";
  options.device_key = "sim";
  options.measure_s = 0.005;
  ASSERT_TRUE(options.Validate().ok());
  FakeAgent agent(options, proto::DeviceInfo());
  agent.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return agent.connection().connected(); }));
  EXPECT_EQ(tracker.last_registration().role(), proto::AGENT);
  EXPECT_EQ(tracker.last_registration().device_key(), "sim");

  proto::TrackerMessage work;
  work.mutable_measure()->set_lease_id("sim-1");
  work.mutable_measure()->mutable_run()->set_artifact_hash("not-held-anywhere");
  work.mutable_measure()->mutable_run()->mutable_options()->set_repeat(3);
  tracker.Enqueue(work);
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.received().size() == 1; }));
  const proto::MeasureResult result = tracker.received()[0].measure_result();
  EXPECT_EQ(result.lease_id(), "sim-1");
  EXPECT_EQ(result.run().error_no(), 0);
  // Three repeats, trimmed once as the real evaluator does: min and max dropped.
  EXPECT_THAT(result.run().costs(), ElementsAre(0.005));
  EXPECT_FALSE(result.need_artifact());
  EXPECT_GT(result.measure_seconds(), 0.0);
  agent.Stop();
  EXPECT_EQ(agent.measured(), 1);
}

TEST(FakeAgentOptionsTest, NeedsAKeyAndAPositiveMeasureTime) {
  FakeAgentOptions options;
  options.worker.tracker_address = "127.0.0.1:1";
  options.worker.name = "f";
  EXPECT_FALSE(options.Validate().ok());
  options.device_key = "sim";
  options.measure_s = -1;
  EXPECT_FALSE(options.Validate().ok());
  options.measure_s = 0.1;
  EXPECT_TRUE(options.Validate().ok());
}

}  // namespace
}  // namespace tunefleet
