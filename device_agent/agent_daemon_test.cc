// AgentDaemon against a fake tracker: it registers as an agent with its
// device, and answers MeasureRequests from the stream (bytes once, then by
// hash) with MeasureResults on the stream.
#include "device_agent/agent_daemon.h"

#include "common/sha256.h"
#include "gtest/gtest.h"
#include "kernel_runtime/fake_runner.h"
#include "worker_stream/fake_worker_gateway.h"

namespace tunefleet {
namespace {

proto::TrackerMessage Measure(const std::string& lease_id, const std::string& bytes, bool send) {
  proto::TrackerMessage message;
  proto::MeasureRequest* request = message.mutable_measure();
  request->set_lease_id(lease_id);
  request->mutable_run()->set_artifact_hash(Sha256Hex(bytes));
  if (send) request->mutable_run()->set_shared_object(bytes);
  request->mutable_run()->mutable_options()->set_repeat(2);
  return message;
}

proto::DeviceInfo TestDevice() {
  proto::DeviceInfo device;
  device.set_arch("x86_64");
  device.set_cores(2);
  return device;
}

TEST(AgentDaemonTest, RegistersItsDeviceAndMeasuresOnTheStream) {
  FakeWorkerGateway tracker;
  FakeRunner runner;
  AgentDaemonOptions options;
  options.worker.tracker_address = tracker.address();
  options.worker.name = "agent-test";
  options.device_key = "x86-test";
  ASSERT_TRUE(options.Validate().ok());
  AgentDaemon daemon(options, TestDevice(), &runner);
  daemon.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.connection().connected(); }));
  const proto::Register registration = tracker.last_registration();
  EXPECT_EQ(registration.role(), proto::AGENT);
  EXPECT_EQ(registration.device_key(), "x86-test");
  EXPECT_EQ(registration.device().cores(), 2);
  EXPECT_EQ(registration.parallelism(), 1);
  EXPECT_EQ(tracker.last_authorization(), "");

  tracker.Enqueue(Measure("first", "kernel-bytes", /*send=*/true));
  tracker.Enqueue(Measure("second", "kernel-bytes", /*send=*/false));
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.received().size() == 2; }));
  for (const proto::WorkerMessage& answer : tracker.received()) {
    ASSERT_TRUE(answer.has_measure_result());
    EXPECT_EQ(answer.measure_result().run().error_no(), 0)
        << answer.measure_result().run().error_msg();
    EXPECT_EQ(answer.measure_result().run().costs_size(), 2);
  }
  EXPECT_EQ(tracker.received()[0].measure_result().lease_id(), "first");
  EXPECT_EQ(tracker.received()[1].measure_result().lease_id(), "second");
  daemon.Stop();
}

proto::TrackerMessage SignedMeasure(const std::string& lease_id, const std::string& bytes,
                                    const SigningKey& key) {
  proto::TrackerMessage message = Measure(lease_id, bytes, /*send=*/true);
  proto::MeasureRequest* request = message.mutable_measure();
  request->mutable_run()->set_entry_name("dense_kernel");
  request->set_artifact_signature(key.Sign(Sha256Hex(bytes), "dense_kernel"));
  request->set_artifact_signer(key.public_key_text());
  return message;
}

// A tracker (or a man in the middle) that pins its own key at registration
// gets its artifacts loaded by an agent that follows the tracker, and
// refused by one that pins its builders' keys itself.
TEST(AgentDaemonTest, AnAgentWithItsOwnKeysIgnoresTheKeysATrackerHandsIt) {
  absl::StatusOr<SigningKey> builder = SigningKey::Generate();
  absl::StatusOr<SigningKey> intruder = SigningKey::Generate();
  ASSERT_TRUE(builder.ok() && intruder.ok());
  for (const bool own_keys : {false, true}) {
    SCOPED_TRACE(own_keys ? "agent pins its own keys" : "agent follows the tracker");
    FakeWorkerGateway tracker;
    tracker.SetBuilderKeys({intruder->public_key_text()});
    FakeRunner runner;
    AgentDaemonOptions options;
    options.worker.tracker_address = tracker.address();
    options.worker.name = "agent-test";
    options.device_key = "x86-test";
    if (own_keys) {
      absl::StatusOr<PinnedKeys> pinned = PinnedKeys::FromTexts({builder->public_key_text()});
      ASSERT_TRUE(pinned.ok());
      options.builder_keys = *std::move(pinned);
    }
    AgentDaemon daemon(options, TestDevice(), &runner);
    daemon.Start();
    ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.connection().connected(); }));
    tracker.Enqueue(SignedMeasure("intruder", "intruder-kernel", *intruder));
    tracker.Enqueue(SignedMeasure("builder", "builder-kernel", *builder));
    ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return tracker.received().size() == 2; }));
    const std::vector<proto::WorkerMessage> answers = tracker.received();
    const proto::RunResult& by_intruder = answers[0].measure_result().run();
    const proto::RunResult& by_builder = answers[1].measure_result().run();
    if (own_keys) {
      EXPECT_NE(by_intruder.error_no(), 0);
      EXPECT_NE(by_intruder.error_msg().find("artifact refused"), std::string::npos)
          << by_intruder.error_msg();
      EXPECT_EQ(by_builder.error_no(), 0) << by_builder.error_msg();
      EXPECT_EQ(daemon.artifacts_refused(), 1);
    } else {
      EXPECT_EQ(by_intruder.error_no(), 0) << by_intruder.error_msg();
      EXPECT_NE(by_builder.error_no(), 0);
    }
    daemon.Stop();
  }
}

TEST(AgentDaemonTest, OptionsRequireADeviceKey) {
  AgentDaemonOptions options;
  options.worker.tracker_address = "127.0.0.1:7070";
  options.worker.name = "a";
  EXPECT_NE(options.Validate().message().find("device key"), absl::string_view::npos);
}

}  // namespace
}  // namespace tunefleet
