#include "clients/cpp/fleet_client.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/daemon_util.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "rpc/grpc_status.h"

namespace tunefleet {
namespace {

// The RPC's status, its message prefixed with what was asked.
[[nodiscard]] absl::Status FromGrpc(const grpc::Status& s, const std::string& what) {
  const absl::Status status = ::tunefleet::FromGrpc(s);
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

}  // namespace

[[nodiscard]] absl::StatusOr<FleetAddress> ResolveFleet(const std::string& tracker,
                                                        const std::string& token_file,
                                                        const std::string& fleet_dir) {
  std::string dir = fleet_dir;
  if (dir.empty()) {
    const char* env = std::getenv("TUNEFLEET_DIR");
    dir = env != nullptr ? env : ".tunefleet";
  }
  FleetAddress fleet;
  fleet.address = tracker;
  if (fleet.address.empty()) {
    absl::StatusOr<std::string> address = ReadFileToString(dir + "/address", kMaxSmallFileBytes);
    if (address.ok()) fleet.address = std::string(absl::StripAsciiWhitespace(*address));
    if (fleet.address.empty()) {
      return absl::NotFoundError(
          absl::StrCat("no --tracker given and no fleet in ", dir,
                       " (start one with `tunefleet up`, or pass --tracker)"));
    }
  }
  if (!token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(token_file);
    if (!token.ok()) return token.status();
    fleet.token = *token;
  } else if (access((dir + "/user.token").c_str(), F_OK) == 0) {
    absl::StatusOr<std::string> token = ReadTokenFile(dir + "/user.token");
    if (!token.ok()) return token.status();
    fleet.token = *token;
  }
  return fleet;
}

FleetClient::FleetClient(const FleetAddress& fleet, double deadline_s)
    : fleet_(fleet),
      deadline_s_(deadline_s),
      trackers_(fleet.address, fleet.credentials == nullptr) {
  absl::MutexLock lock(&mutex_);
  Dial();
}

void FleetClient::Dial() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(128 << 20);
  channel_ = grpc::CreateCustomChannel(
      trackers_.current(),
      fleet_.credentials != nullptr ? fleet_.credentials : grpc::InsecureChannelCredentials(),
      args);
  stub_ = proto::JobService::NewStub(channel_);
}

std::shared_ptr<proto::JobService::Stub> FleetClient::stub() {
  absl::MutexLock lock(&mutex_);
  return stub_;
}

bool FleetClient::Follow(const grpc::Status& status, const grpc::ClientContext& context,
                         bool idempotent) {
  // A tracker that does not answer in time (hung, or stopped with its
  // socket open) is left too, for calls safe to repeat.
  const bool silent = status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
  if (status.error_code() != grpc::StatusCode::UNAVAILABLE && !(silent && idempotent)) {
    return false;
  }
  const std::string hint = LeaderHint(context);
  // A standby refused the call before doing anything, so even a submission
  // may go to the leader; any other unavailability is retried elsewhere
  // only when the call is safe to repeat.
  const bool standby = !hint.empty() || absl::StartsWith(status.error_message(), "standby tracker");
  if (!standby && !idempotent) return false;
  absl::MutexLock lock(&mutex_);
  if (!trackers_.Advance(hint)) return false;
  Dial();
  return true;
}

template <typename Call>
absl::Status FleetClient::Unary(const char* name, bool idempotent, Call call) {
  grpc::Status status;
  for (size_t attempt = 0; attempt < trackers_.size() + 2; ++attempt) {
    grpc::ClientContext context;
    Prepare(context, true);
    status = call(*stub(), &context);
    if (!Follow(status, context, idempotent)) break;
  }
  return FromGrpc(status, name);
}

void FleetClient::Prepare(grpc::ClientContext& context, bool with_deadline) const {
  if (!fleet_.token.empty()) context.AddMetadata("authorization", "Bearer " + fleet_.token);
  if (with_deadline) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(static_cast<int64_t>(deadline_s_ * 1000)));
  }
}

absl::StatusOr<proto::JobStatus> FleetClient::Submit(const proto::JobSpec& spec) {
  proto::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  proto::SubmitJobResponse response;
  TF_RETURN_IF_ERROR(Unary("SubmitJob", false, [&](Stub& stub, grpc::ClientContext* context) {
    return stub.SubmitJob(context, request, &response);
  }));
  return response.status();
}

absl::StatusOr<proto::JobStatus> FleetClient::Get(const std::string& job_id) {
  proto::GetJobRequest request;
  request.set_job_id(job_id);
  proto::JobStatus response;
  TF_RETURN_IF_ERROR(Unary("GetJob", true, [&](Stub& stub, grpc::ClientContext* context) {
    return stub.GetJob(context, request, &response);
  }));
  return response;
}

absl::StatusOr<proto::JobStatus> FleetClient::Cancel(const std::string& job_id) {
  proto::CancelJobRequest request;
  request.set_job_id(job_id);
  proto::JobStatus response;
  TF_RETURN_IF_ERROR(Unary("CancelJob", true, [&](Stub& stub, grpc::ClientContext* context) {
    return stub.CancelJob(context, request, &response);
  }));
  return response;
}

absl::StatusOr<std::vector<proto::JobStatus>> FleetClient::List(bool include_finished) {
  proto::ListJobsRequest request;
  request.set_include_finished(include_finished);
  proto::ListJobsResponse response;
  TF_RETURN_IF_ERROR(Unary("ListJobs", true, [&](Stub& stub, grpc::ClientContext* context) {
    return stub.ListJobs(context, request, &response);
  }));
  return std::vector<proto::JobStatus>(response.jobs().begin(), response.jobs().end());
}

absl::StatusOr<proto::BestConfigResponse> FleetClient::Best(
    const proto::BestConfigRequest& request) {
  proto::BestConfigResponse response;
  TF_RETURN_IF_ERROR(Unary("BestConfig", true, [&](Stub& stub, grpc::ClientContext* context) {
    return stub.BestConfig(context, request, &response);
  }));
  return response;
}

absl::StatusOr<std::vector<std::string>> FleetClient::Export(const std::string& job_id,
                                                             int32_t task_index) {
  proto::ExportRecordsRequest request;
  request.set_job_id(job_id);
  if (task_index >= 0) request.set_task_index(task_index);
  std::vector<std::string> lines;
  grpc::Status status;
  for (size_t attempt = 0; attempt < trackers_.size() + 2; ++attempt) {
    grpc::ClientContext context;
    Prepare(context, false);
    std::shared_ptr<Stub> now = stub();
    std::unique_ptr<grpc::ClientReader<proto::RecordLines>> reader =
        now->ExportRecords(&context, request);
    proto::RecordLines chunk;
    while (reader->Read(&chunk)) {
      for (std::string& l : *chunk.mutable_lines()) lines.push_back(std::move(l));
    }
    status = reader->Finish();
    // Lines already read: the export broke midway, and is not repeated.
    if (!lines.empty() || !Follow(status, context, true)) break;
  }
  TF_RETURN_IF_ERROR(FromGrpc(status, "ExportRecords"));
  return lines;
}

absl::StatusOr<proto::ListDevicesResponse> FleetClient::Devices() {
  proto::ListDevicesResponse response;
  TF_RETURN_IF_ERROR(Unary("ListDevices", true, [&](Stub& stub, grpc::ClientContext* context) {
    return stub.ListDevices(context, proto::ListDevicesRequest(), &response);
  }));
  return response;
}

absl::StatusOr<proto::QueueSummaryResponse> FleetClient::Queue() {
  proto::QueueSummaryResponse response;
  TF_RETURN_IF_ERROR(Unary("QueueSummary", true, [&](Stub& stub, grpc::ClientContext* context) {
    return stub.QueueSummary(context, proto::QueueSummaryRequest(), &response);
  }));
  return response;
}

absl::Status FleetClient::Watch(const std::string& job_id,
                                const std::function<void(const proto::JobEvent&)>& on_event) {
  proto::WatchJobRequest request;
  request.set_job_id(job_id);
  grpc::Status status;
  for (size_t attempt = 0; attempt < trackers_.size() + 2; ++attempt) {
    grpc::ClientContext context;
    Prepare(context, false);
    std::shared_ptr<Stub> now = stub();
    std::unique_ptr<grpc::ClientReader<proto::JobEvent>> reader = now->WatchJob(&context, request);
    proto::JobEvent event;
    bool any = false;
    while (reader->Read(&event)) {
      any = true;
      on_event(event);
    }
    status = reader->Finish();
    if (any || !Follow(status, context, true)) break;
  }
  return FromGrpc(status, "WatchJob");
}

absl::Status FleetClient::WaitHealthy(double timeout_s) {
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  std::shared_ptr<grpc::Channel> channel;
  {
    absl::MutexLock lock(&mutex_);
    channel = channel_;
  }
  if (!channel->WaitForConnected(deadline)) {
    return absl::UnavailableError(
        absl::StrCat("tracker ", fleet_.address, " unreachable after ", timeout_s, " s"));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
