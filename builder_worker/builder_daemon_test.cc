// BuilderDaemon against a fake tracker: it registers as a builder and answers
// a BuildRequest from the stream with a BuildResult on the stream.
#include "builder_worker/builder_daemon.h"

#include "common/sha256.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tuner_core/templates/task.h"
#include "worker_stream/fake_worker_gateway.h"

namespace tunefleet {
namespace {

TEST(BuilderDaemonTest, RegistersAndAnswersABuildRequestOnTheStream) {
  FakeWorkerGateway tracker;
  BuilderDaemonOptions options;
  options.worker.tracker_address = tracker.address();
  options.worker.token = "builder-token";
  options.worker.name = "builder-test";
  options.service.parallelism = 1;
  ASSERT_TRUE(options.Validate().ok());
  BuilderDaemon daemon(options);
  daemon.Start();
  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return daemon.connection().connected(); }));
  EXPECT_EQ(tracker.last_registration().role(), proto::BUILDER);
  EXPECT_EQ(tracker.last_registration().parallelism(), 1);
  EXPECT_EQ(tracker.last_authorization(), "Bearer builder-token");

  const char* args = R"({"M": 16, "N": 16, "K": 16})";
  auto task = Task::Make("", "dense", nlohmann::json::parse(args), "llvm");
  ASSERT_TRUE(task.ok()) << task.status();
  proto::TrackerMessage work;
  proto::BuildRequest* request = work.mutable_build();
  request->set_lease_id("lease-9");
  request->mutable_task()->set_workload_name("dense");
  request->mutable_task()->set_workload_args_json(args);
  request->mutable_task()->set_target("llvm");
  request->set_config_json((*task)->space().Get(0)->ToJson().dump());
  request->set_timeout_s(120);
  tracker.Enqueue(work);

  ASSERT_TRUE(FakeWorkerGateway::WaitFor([&] { return !tracker.received().empty(); }));
  const proto::WorkerMessage answer = tracker.received()[0];
  ASSERT_TRUE(answer.has_build_result());
  EXPECT_EQ(answer.build_result().lease_id(), "lease-9");
  EXPECT_EQ(answer.build_result().error_no(), 0) << answer.build_result().error_msg();
  EXPECT_EQ(answer.build_result().artifact_hash(),
            Sha256Hex(answer.build_result().shared_object()));
  daemon.Stop();
}

}  // namespace
}  // namespace tunefleet
