// Tracker replicas on one PostgreSQL store, in this process: one leads, the
// other stands by and redirects, the standby takes over with every job when
// the leader goes, and a leader whose lease is cut stops at once.
#include "tracker/replica.h"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "metrics/metrics_testing.h"
#include "proto/fleet.grpc.pb.h"
#include "rpc/generic_call.h"
#include "tracker/store/postgres_test_server.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> address = NewSharedTestDatabase();
    ASSERT_TRUE(address.ok()) << address.status();
    store_ = *address;
  }

  std::unique_ptr<TrackerReplica> StartReplica() {
    TrackerServerOptions options;
    options.listen = "127.0.0.1:0";
    options.store_path = store_;
    options.metrics_listen = "127.0.0.1:0";
    ReplicaOptions replica;
    replica.standby_poll = absl::Milliseconds(100);
    replica.lease_check = absl::Milliseconds(100);
    absl::StatusOr<std::unique_ptr<TrackerReplica>> started =
        TrackerReplica::Start(options, replica);
    EXPECT_TRUE(started.ok()) << started.status();
    return started.ok() ? std::move(started).value() : nullptr;
  }

  static bool WaitUntil(const std::function<bool()>& done, double timeout_s = 30) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout_s * 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  }

  static std::string Address(const TrackerReplica& replica) {
    return absl::StrCat("127.0.0.1:", replica.port());
  }

  static proto::JobSpec Job() {
    proto::JobSpec spec;
    spec.set_device_key("cpu");
    spec.mutable_task()->set_workload_name("dense");
    spec.mutable_task()->set_workload_args_json(R"({"M":16,"N":16,"K":16})");
    spec.mutable_task()->set_target("llvm");
    spec.set_tuner("random");
    spec.set_n_trial(4);
    return spec;
  }

  // grpc.health.v1.Health/Check: 1 SERVING, 2 NOT_SERVING, 0 UNKNOWN, -1
  // when the call failed.
  static int Health(const std::string& address, const std::string& service) {
    // HealthCheckRequest.service is field 1 (a string).
    std::string request;
    if (!service.empty()) request = std::string("\x0a") + char(service.size()) + service;
    absl::StatusOr<std::string> answer =
        UnaryGenericCall(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()),
                         "/grpc.health.v1.Health/Check", {}, request);
    EXPECT_TRUE(answer.ok()) << answer.status();
    if (!answer.ok()) return -1;
    // HealthCheckResponse.status is field 1 (a varint); absent means 0.
    return answer->size() == 2 && (*answer)[0] == 0x08 ? (*answer)[1] : 0;
  }

  std::string store_;
};

TEST_F(ReplicaTest, TheStandbyRedirectsAndTakesOverWithEveryJob) {
  std::unique_ptr<TrackerReplica> a = StartReplica();
  ASSERT_TRUE(WaitUntil([&] { return a->leading(); }));
  std::unique_ptr<TrackerReplica> b = StartReplica();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a few standby polls
  EXPECT_FALSE(b->leading());

  // The standby is ready (it redirects) but serves neither service.
  constexpr int kServing = 1, kNotServing = 2;
  EXPECT_EQ(Health(Address(*b), ""), kServing);
  EXPECT_EQ(Health(Address(*b), "tunefleet.proto.JobService"), kNotServing);
  // It serves this process's metrics (what a liveness probe asks), not the
  // fleet's.
  absl::StatusOr<std::string> standby_metrics = HttpGetForTest(b->metrics_port(), "/metrics");
  ASSERT_TRUE(standby_metrics.ok()) << standby_metrics.status();
  EXPECT_THAT(*standby_metrics, HasSubstr("process_cpu_seconds_total"));
  EXPECT_THAT(*standby_metrics, Not(HasSubstr("tunefleet_jobs")));

  // A raw call to the standby: refused, naming the leader.
  {
    auto stub = proto::JobService::NewStub(
        grpc::CreateChannel(Address(*b), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    proto::ListJobsResponse response;
    grpc::Status status = stub->ListJobs(&context, proto::ListJobsRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(status.error_message(),
                HasSubstr("standby tracker: the leader is at " + Address(*a)));
  }

  // A job submitted to the leader (clients that follow a standby's hint:
  // tests/tracker_ha_test).
  proto::SubmitJobResponse submitted;
  {
    auto stub = proto::JobService::NewStub(
        grpc::CreateChannel(Address(*a), grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    proto::SubmitJobRequest request;
    *request.mutable_spec() = Job();
    grpc::Status status = stub->SubmitJob(&context, request, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // The leader goes; the standby takes over and resumes the job.
  a.reset();
  ASSERT_TRUE(WaitUntil([&] { return b->leading(); }));
  auto stub = proto::JobService::NewStub(
      grpc::CreateChannel(Address(*b), grpc::InsecureChannelCredentials()));
  grpc::Status got;
  proto::JobStatus resumed;
  ASSERT_TRUE(WaitUntil([&] {
    grpc::ClientContext context;
    proto::GetJobRequest request;
    request.set_job_id(submitted.job_id());
    got = stub->GetJob(&context, request, &resumed);
    return got.ok();
  })) << got.error_message();
  EXPECT_EQ(resumed.job_id(), submitted.job_id());
  EXPECT_EQ(Health(Address(*b), "tunefleet.proto.JobService"), kServing);
  // Now the fleet's metrics, on the port the standby held.
  absl::StatusOr<std::string> leader_metrics = HttpGetForTest(b->metrics_port(), "/metrics");
  ASSERT_TRUE(leader_metrics.ok()) << leader_metrics.status();
  EXPECT_THAT(*leader_metrics, HasSubstr("tunefleet_jobs"));
}

TEST_F(ReplicaTest, ALeaderWhoseLeaseIsCutStopsAndAnotherLeads) {
  std::unique_ptr<TrackerReplica> a = StartReplica();
  ASSERT_TRUE(WaitUntil([&] { return a->leading(); }));
  std::unique_ptr<TrackerReplica> b = StartReplica();
  ASSERT_TRUE(SharedPostgresTestServer().value()->TerminateSessions(kLeaseApplicationName).ok());
  // The leader notices within its next check and stops serving at once.
  absl::Status ended = a->Wait();
  EXPECT_EQ(ended.code(), absl::StatusCode::kUnavailable) << ended;
  EXPECT_THAT(ended.message(), HasSubstr("lost the leader lease"));
  EXPECT_FALSE(a->leading());
  a.reset();
  // The standby, whose session was cut too, reconnects and takes over. Or,
  // where its poll took the lease in the moment between the end of the
  // leader's session and the end of its own, it lost the lease with its
  // session and stopped, as a leader must; then a fresh replica leads.
  std::future<absl::Status> b_ended = std::async(std::launch::async, [&] { return b->Wait(); });
  ASSERT_TRUE(WaitUntil([&] {
    return b->leading() || b_ended.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }));
  if (!b->leading()) {
    const absl::Status b_status = b_ended.get();
    EXPECT_THAT(b_status.message(), HasSubstr("lost the leader lease")) << b_status;
    std::unique_ptr<TrackerReplica> c = StartReplica();
    EXPECT_TRUE(WaitUntil([&] { return c->leading(); }));
    return;
  }
  b->Shutdown();  // b_ended's Wait returns
}

TEST_F(ReplicaTest, AReplicaThatCouldNeverLeadRefusesToStandBy) {
  TrackerServerOptions options;
  options.listen = "0.0.0.0:0";  // beyond loopback, with no tokens and no TLS
  options.store_path = store_;
  absl::StatusOr<std::unique_ptr<TrackerReplica>> refused = TrackerReplica::Start(options, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("without authentication"));
}

TEST_F(ReplicaTest, WithoutPostgresTheTrackerLeadsAlone) {
  TrackerServerOptions options;
  options.listen = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<TrackerReplica>> alone = TrackerReplica::Start(options, {});
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_TRUE((*alone)->leading());
  EXPECT_GT((*alone)->port(), 0);
}

}  // namespace
}  // namespace tunefleet
