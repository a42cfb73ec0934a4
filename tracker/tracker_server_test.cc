// The tracker daemon started in process, checked from outside as an operator's
// tools would: gRPC server reflection (what `grpcurl list` asks), the
// standard health service (what Kubernetes' gRPC probe asks) and /metrics.
// Neither the reflection nor the health .proto stubs ship in Debian, so the
// calls go through grpc::GenericStub with the few protobuf fields they need
// encoded by hand and decoded with UnknownFieldSet.
#include "tracker/tracker_server.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/unknown_field_set.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "metrics/metrics_testing.h"
#include "proto/fleet.grpc.pb.h"

namespace tunefleet {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kReflectionMethod[] =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
constexpr char kHealthCheckMethod[] = "/grpc.health.v1.Health/Check";
constexpr int kServing = 1;  // grpc.health.v1.HealthCheckResponse.ServingStatus

std::chrono::system_clock::time_point Deadline() {
  return std::chrono::system_clock::now() + std::chrono::seconds(10);
}

grpc::ByteBuffer ToByteBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string FromByteBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return "";
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

// A length-delimited field `number` holding `value`, in protobuf wire format.
std::string StringField(int number, const std::string& value) {
  std::string bytes(1, static_cast<char>((number << 3) | 2));
  bytes.push_back(static_cast<char>(value.size()));  // values here are < 128 bytes
  return bytes + value;
}

// The length-delimited fields `number` of a message in wire format.
std::vector<std::string> StringFields(const std::string& message, int number) {
  google::protobuf::UnknownFieldSet fields;
  std::vector<std::string> values;
  if (!fields.ParseFromString(message)) return values;
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& field = fields.field(i);
    if (field.number() == number &&
        field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      values.push_back(field.length_delimited());
    }
  }
  return values;
}

// Waits for `tag` on `queue`; false if the operation failed or took too long.
bool Await(grpc::CompletionQueue& queue, void* tag) {
  void* got = nullptr;
  bool ok = false;
  if (queue.AsyncNext(&got, &ok, Deadline()) != grpc::CompletionQueue::GOT_EVENT) return false;
  return got == tag && ok;
}

class TrackerServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TrackerServerOptions options;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<TrackerServer>> tracker = TrackerServer::Start(options);
    ASSERT_TRUE(tracker.ok()) << tracker.status();
    tracker_ = *std::move(tracker);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", tracker_->port()),
                                   grpc::InsecureChannelCredentials());
  }

  // The service names a ServerReflectionInfo list_services request returns.
  std::vector<std::string> ListServices() {
    grpc::GenericStub stub(channel_);
    grpc::CompletionQueue queue;
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
        stub.PrepareCall(&context, kReflectionMethod, &queue);
    int start, write, writes_done, read, finish;
    call->StartCall(&start);
    EXPECT_TRUE(Await(queue, &start));
    // ServerReflectionRequest: list_services (field 7, string).
    call->Write(ToByteBuffer(StringField(7, "*")), &write);
    EXPECT_TRUE(Await(queue, &write));
    call->WritesDone(&writes_done);
    EXPECT_TRUE(Await(queue, &writes_done));
    grpc::ByteBuffer response;
    call->Read(&response, &read);
    EXPECT_TRUE(Await(queue, &read));
    grpc::Status status;
    call->Finish(&status, &finish);
    EXPECT_TRUE(Await(queue, &finish));
    EXPECT_TRUE(status.ok()) << status.error_message();
    queue.Shutdown();
    // ServerReflectionResponse.list_services_response (6) ->
    // ListServiceResponse.service (1, repeated) -> ServiceResponse.name (1).
    std::vector<std::string> names;
    for (const std::string& list : StringFields(FromByteBuffer(response), 6)) {
      for (const std::string& service : StringFields(list, 1)) {
        for (const std::string& name : StringFields(service, 1)) names.push_back(name);
      }
    }
    return names;
  }

  // grpc.health.v1.Health/Check for `service`: the status field of the
  // answer (0 UNKNOWN, 1 SERVING, 2 NOT_SERVING), or -1 with the call's error.
  int HealthCheck(const std::string& service, grpc::Status* status) {
    grpc::GenericStub stub(channel_);
    grpc::CompletionQueue queue;
    grpc::ClientContext context;
    context.set_deadline(Deadline());
    const std::string request = service.empty() ? "" : StringField(1, service);
    std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> call =
        stub.PrepareUnaryCall(&context, kHealthCheckMethod, ToByteBuffer(request), &queue);
    call->StartCall();
    grpc::ByteBuffer response;
    int finish;
    call->Finish(&response, status, &finish);
    const bool done = Await(queue, &finish);
    queue.Shutdown();
    if (!done || !status->ok()) return -1;
    google::protobuf::UnknownFieldSet fields;
    if (!fields.ParseFromString(FromByteBuffer(response))) return -1;
    for (int i = 0; i < fields.field_count(); ++i) {
      if (fields.field(i).number() == 1) return static_cast<int>(fields.field(i).varint());
    }
    return 0;  // proto3: UNKNOWN is not on the wire
  }

  std::unique_ptr<TrackerServer> tracker_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(TrackerServerTest, ReflectionListsTheTrackersServices) {
  const std::vector<std::string> services = ListServices();
  EXPECT_THAT(services, Contains(proto::WorkerGateway::service_full_name()));
  EXPECT_THAT(services, Contains(proto::JobService::service_full_name()));
  EXPECT_THAT(services, Contains("grpc.health.v1.Health"));
}

TEST_F(TrackerServerTest, HealthServiceAnswersServingForTheServerAndEachService) {
  for (const std::string& service :
       {std::string(""), std::string(proto::WorkerGateway::service_full_name()),
        std::string(proto::JobService::service_full_name())}) {
    grpc::Status status;
    EXPECT_EQ(HealthCheck(service, &status), kServing)
        << "service '" << service << "': " << status.error_message();
  }
}

TEST_F(TrackerServerTest, HealthServiceDoesNotKnowOtherServices) {
  grpc::Status status;
  EXPECT_EQ(HealthCheck("no.such.Service", &status), -1);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
}

TEST_F(TrackerServerTest, ServesItsMetricsWithProcessMetricsAndPromtoolAcceptsThem) {
  ASSERT_GT(tracker_->metrics_port(), 0);
  EXPECT_EQ(tracker_->metrics_url(),
            absl::StrCat("http://127.0.0.1:", tracker_->metrics_port(), "/metrics"));
  absl::StatusOr<std::string> body = ScrapeForTest(tracker_->metrics_port());
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_THAT(*body, HasSubstr("tunefleet_trials_total{result=\"no_error\"} 0\n"));
  EXPECT_THAT(*body, HasSubstr("tunefleet_jobs{priority_class=\"1\",state=\"queued\"} 0\n"));
  EXPECT_THAT(*body, HasSubstr("tunefleet_build_info{"));
  EXPECT_THAT(*body, HasSubstr("\nprocess_resident_memory_bytes "));
  EXPECT_THAT(*body, HasSubstr("\nprocess_open_fds "));
  if (!PromtoolInstalled()) {
    GTEST_SKIP() << kPromtoolPath << " not installed (Debian package 'prometheus'); lint not run";
  }
  const absl::Status lint = PromtoolCheckMetrics(*body);
  EXPECT_TRUE(lint.ok()) << lint << "\n" << *body;
}

}  // namespace
}  // namespace tunefleet
