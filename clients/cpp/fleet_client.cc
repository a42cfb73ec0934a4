#include "clients/cpp/fleet_client.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/daemon_util.h"
#include "common/file_util.h"
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
    : fleet_(fleet), deadline_s_(deadline_s) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(128 << 20);
  channel_ = grpc::CreateCustomChannel(
      fleet.address,
      fleet.credentials != nullptr ? fleet.credentials : grpc::InsecureChannelCredentials(), args);
  stub_ = proto::JobService::NewStub(channel_);
}

void FleetClient::Prepare(grpc::ClientContext& context, bool with_deadline) const {
  if (!fleet_.token.empty()) context.AddMetadata("authorization", "Bearer " + fleet_.token);
  if (with_deadline) {
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(static_cast<int64_t>(deadline_s_ * 1000)));
  }
}

absl::StatusOr<proto::JobStatus> FleetClient::Submit(const proto::JobSpec& spec) {
  grpc::ClientContext context;
  Prepare(context, true);
  proto::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  proto::SubmitJobResponse response;
  absl::Status s = FromGrpc(stub_->SubmitJob(&context, request, &response), "SubmitJob");
  if (!s.ok()) return s;
  return response.status();
}

absl::StatusOr<proto::JobStatus> FleetClient::Get(const std::string& job_id) {
  grpc::ClientContext context;
  Prepare(context, true);
  proto::GetJobRequest request;
  request.set_job_id(job_id);
  proto::JobStatus response;
  absl::Status s = FromGrpc(stub_->GetJob(&context, request, &response), "GetJob");
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<proto::JobStatus> FleetClient::Cancel(const std::string& job_id) {
  grpc::ClientContext context;
  Prepare(context, true);
  proto::CancelJobRequest request;
  request.set_job_id(job_id);
  proto::JobStatus response;
  absl::Status s = FromGrpc(stub_->CancelJob(&context, request, &response), "CancelJob");
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<std::vector<proto::JobStatus>> FleetClient::List(bool include_finished) {
  grpc::ClientContext context;
  Prepare(context, true);
  proto::ListJobsRequest request;
  request.set_include_finished(include_finished);
  proto::ListJobsResponse response;
  absl::Status s = FromGrpc(stub_->ListJobs(&context, request, &response), "ListJobs");
  if (!s.ok()) return s;
  return std::vector<proto::JobStatus>(response.jobs().begin(), response.jobs().end());
}

absl::StatusOr<proto::BestConfigResponse> FleetClient::Best(
    const proto::BestConfigRequest& request) {
  grpc::ClientContext context;
  Prepare(context, true);
  proto::BestConfigResponse response;
  absl::Status s = FromGrpc(stub_->BestConfig(&context, request, &response), "BestConfig");
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<std::vector<std::string>> FleetClient::Export(const std::string& job_id,
                                                             int32_t task_index) {
  grpc::ClientContext context;
  Prepare(context, false);
  proto::ExportRecordsRequest request;
  request.set_job_id(job_id);
  if (task_index >= 0) request.set_task_index(task_index);
  std::unique_ptr<grpc::ClientReader<proto::RecordLines>> reader =
      stub_->ExportRecords(&context, request);
  std::vector<std::string> lines;
  proto::RecordLines chunk;
  while (reader->Read(&chunk)) {
    for (std::string& l : *chunk.mutable_lines()) lines.push_back(std::move(l));
  }
  absl::Status s = FromGrpc(reader->Finish(), "ExportRecords");
  if (!s.ok()) return s;
  return lines;
}

absl::StatusOr<proto::ListDevicesResponse> FleetClient::Devices() {
  grpc::ClientContext context;
  Prepare(context, true);
  proto::ListDevicesResponse response;
  absl::Status s =
      FromGrpc(stub_->ListDevices(&context, proto::ListDevicesRequest(), &response), "ListDevices");
  if (!s.ok()) return s;
  return response;
}

absl::StatusOr<proto::QueueSummaryResponse> FleetClient::Queue() {
  grpc::ClientContext context;
  Prepare(context, true);
  proto::QueueSummaryResponse response;
  absl::Status s = FromGrpc(stub_->QueueSummary(&context, proto::QueueSummaryRequest(), &response),
                            "QueueSummary");
  if (!s.ok()) return s;
  return response;
}

absl::Status FleetClient::Watch(const std::string& job_id,
                                const std::function<void(const proto::JobEvent&)>& on_event) {
  grpc::ClientContext context;
  Prepare(context, false);
  proto::WatchJobRequest request;
  request.set_job_id(job_id);
  std::unique_ptr<grpc::ClientReader<proto::JobEvent>> reader = stub_->WatchJob(&context, request);
  proto::JobEvent event;
  while (reader->Read(&event)) on_event(event);
  return FromGrpc(reader->Finish(), "WatchJob");
}

absl::Status FleetClient::WaitHealthy(double timeout_s) {
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  if (!channel_->WaitForConnected(deadline)) {
    return absl::UnavailableError(
        absl::StrCat("tracker ", fleet_.address, " unreachable after ", timeout_s, " s"));
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
