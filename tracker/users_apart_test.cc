// Users apart, tried for real over gRPC against a running tracker: a job
// belongs to the token that submitted it; another user's token cannot read,
// watch, export or cancel it, nor pull every job's records; a listing shows
// others' jobs without their configs; an admin token sees everything; the
// owner a client writes into its spec is replaced by the tracker.
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/fleet.grpc.pb.h"
#include "tracker/auth.h"
#include "tracker/tracker_server.h"

namespace tunefleet {
namespace {

using ::testing::HasSubstr;

constexpr char kAlice[] = "tf_00000000000000a1_alice-secret-0123456789abcdef0123456789";
constexpr char kBob[] = "tf_00000000000000b0_bob-secret-0123456789abcdef0123456789abcd";
constexpr char kAdmin[] = "tf_00000000000000ad_admin-secret-0123456789abcdef0123456789a";

class UsersApartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TokenSet tokens;
    ASSERT_TRUE(tokens.Add(Role::kUser, kAlice).ok());
    ASSERT_TRUE(tokens.Add(Role::kUser, kBob).ok());
    ASSERT_TRUE(tokens.Add(Role::kAdmin, kAdmin).ok());
    const char* tmp = std::getenv("TEST_TMPDIR");
    const std::string file = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/users_apart_tokens");
    ASSERT_TRUE(tokens.WriteTokenFile(file).ok());
    TrackerServerOptions options;
    options.listen = "127.0.0.1:0";
    options.token_file = file;
    absl::StatusOr<std::unique_ptr<TrackerServer>> tracker = TrackerServer::Start(options);
    ASSERT_TRUE(tracker.ok()) << tracker.status();
    tracker_ = *std::move(tracker);
    stub_ = proto::JobService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", tracker_->port()), grpc::InsecureChannelCredentials()));
  }

  std::unique_ptr<grpc::ClientContext> As(const char* token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    context->AddMetadata(kAuthorizationMetadataKey, BearerHeader(token));
    return context;
  }

  std::string SubmitAs(const char* token, const std::string& claimed_owner) {
    proto::SubmitJobRequest request;
    proto::JobSpec* spec = request.mutable_spec();
    spec->set_device_key("cpu");
    spec->mutable_task()->set_workload_name("dense");
    spec->mutable_task()->set_workload_args_json(R"({"M":16,"N":16,"K":16})");
    spec->mutable_task()->set_target("llvm");
    spec->set_tuner("random");
    spec->set_n_trial(4);
    spec->set_owner(claimed_owner);
    proto::SubmitJobResponse response;
    grpc::Status s = stub_->SubmitJob(As(token).get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.job_id();
  }

  std::unique_ptr<TrackerServer> tracker_;
  std::unique_ptr<proto::JobService::Stub> stub_;
};

TEST_F(UsersApartTest, OnlyTheOwnerOrAnAdminSeesAJob) {
  // Alice claims to be Bob in her spec: the tracker writes who she is.
  const std::string job = SubmitAs(kAlice, "tf_00000000000000b0");
  ASSERT_FALSE(job.empty());
  proto::GetJobRequest get;
  get.set_job_id(job);
  proto::JobStatus status;
  ASSERT_TRUE(stub_->GetJob(As(kAlice).get(), get, &status).ok());
  EXPECT_EQ(status.spec().owner(), "tf_00000000000000a1");
  ASSERT_TRUE(stub_->GetJob(As(kAdmin).get(), get, &status).ok());

  grpc::Status denied = stub_->GetJob(As(kBob).get(), get, &status);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(), HasSubstr("belongs to another user"));

  proto::CancelJobRequest cancel;
  cancel.set_job_id(job);
  EXPECT_EQ(stub_->CancelJob(As(kBob).get(), cancel, &status).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  proto::WatchJobRequest watch;
  watch.set_job_id(job);
  auto watch_context = As(kBob);
  auto watcher = stub_->WatchJob(watch_context.get(), watch);
  proto::JobEvent event;
  EXPECT_FALSE(watcher->Read(&event));
  EXPECT_EQ(watcher->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);

  for (const std::string& which : {job, std::string()}) {  // hers, and every job's
    proto::ExportRecordsRequest exported;
    exported.set_job_id(which);
    auto export_context = As(kBob);
    auto reader = stub_->ExportRecords(export_context.get(), exported);
    proto::RecordLines lines;
    EXPECT_FALSE(reader->Read(&lines));
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED) << which;
  }
  proto::BestConfigRequest best;
  *best.mutable_task() = status.spec().tasks(0).task();
  proto::BestConfigResponse best_response;
  EXPECT_EQ(stub_->BestConfig(As(kBob).get(), best, &best_response).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // Bob's listing shows Alice's job, without configs; Alice may cancel hers.
  proto::ListJobsRequest list;
  list.set_include_finished(true);
  proto::ListJobsResponse listed;
  ASSERT_TRUE(stub_->ListJobs(As(kBob).get(), list, &listed).ok());
  ASSERT_EQ(listed.jobs_size(), 1);
  EXPECT_TRUE(listed.jobs(0).best_config_json().empty());
  EXPECT_TRUE(stub_->CancelJob(As(kAlice).get(), cancel, &status).ok());
}

}  // namespace
}  // namespace tunefleet
