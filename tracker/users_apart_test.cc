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
constexpr char kCarol[] = "tf_00000000000000c0_carol-secret-0123456789abcdef0123456789ab";
constexpr char kAdmin[] = "tf_00000000000000ad_admin-secret-0123456789abcdef0123456789a";

class UsersApartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TokenSet tokens;
    ASSERT_TRUE(tokens.Add(Role::kUser, kAlice).ok());
    ASSERT_TRUE(tokens.Add(Role::kUser, kBob).ok());
    ASSERT_TRUE(tokens.Add(Role::kAdmin, kAdmin).ok());
    // Carol's line carries a quota (written to the file as jobs= and
    // trials_per_hour=, read back by the tracker).
    TokenScope carol;
    carol.quota.max_jobs_in_flight = 1;
    carol.quota.max_trials_per_hour = 500;
    ASSERT_TRUE(tokens.Add(Role::kUser, kCarol, carol).ok());
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
    proto::SubmitJobResponse response;
    grpc::Status s = TrySubmitAs(token, claimed_owner, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.job_id();
  }

  grpc::Status TrySubmitAs(const char* token, const std::string& claimed_owner,
                           proto::SubmitJobResponse* response) {
    proto::SubmitJobRequest request;
    proto::JobSpec* spec = request.mutable_spec();
    spec->set_device_key("cpu");
    spec->mutable_task()->set_workload_name("dense");
    spec->mutable_task()->set_workload_args_json(R"({"M":16,"N":16,"K":16})");
    spec->mutable_task()->set_target("llvm");
    spec->set_tuner("random");
    spec->set_n_trial(4);
    spec->set_owner(claimed_owner);
    spec->mutable_owner_quota()->set_max_jobs_in_flight(1000);  // a client's word: ignored
    return stub_->SubmitJob(As(token).get(), request, response);
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

// A user's quota comes from its token line, not its request: one job in
// flight for Carol, whatever her spec claims; others are not held by it;
// `queue` shows her quota.
TEST_F(UsersApartTest, AUsersQuotaComesFromItsTokenLine) {
  proto::SubmitJobResponse first;
  grpc::Status submitted = TrySubmitAs(kCarol, "", &first);
  ASSERT_TRUE(submitted.ok()) << submitted.error_message();
  EXPECT_EQ(first.status().spec().owner_quota().max_jobs_in_flight(), 1);
  EXPECT_EQ(first.status().spec().owner_quota().max_trials_per_hour(), 500);
  proto::SubmitJobResponse second;
  const grpc::Status refused = TrySubmitAs(kCarol, "", &second);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("jobs=1"));
  // Alice has no quota: her spec's claim of one is dropped too.
  const std::string alices = SubmitAs(kAlice, "");
  ASSERT_FALSE(alices.empty());
  SubmitAs(kAlice, "");
  proto::QueueSummaryResponse queue;
  const grpc::Status listed =
      stub_->QueueSummary(As(kAdmin).get(), proto::QueueSummaryRequest(), &queue);
  ASSERT_TRUE(listed.ok()) << listed.error_message();
  bool saw_carol = false;
  for (const proto::UserSummary& user : queue.users()) {
    if (user.user() != "tf_00000000000000c0") {
      EXPECT_EQ(user.quota().max_jobs_in_flight(), 0) << user.user();
      continue;
    }
    saw_carol = true;
    EXPECT_EQ(user.jobs_in_flight(), 1);
    EXPECT_EQ(user.quota().max_jobs_in_flight(), 1);
  }
  EXPECT_TRUE(saw_carol);
}

}  // namespace
}  // namespace tunefleet
