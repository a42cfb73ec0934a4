#include "tracker/job_service.h"

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto_convert/job_state.h"
#include "rpc/grpc_status.h"

namespace tunefleet {
namespace {

// A unary call's reply from a scheduler result: its error as the gRPC status,
// or OK after `fill` has put the value into the response.
template <typename T, typename Fill>
grpc::Status Answer(absl::StatusOr<T> result, Fill fill) {
  if (!result.ok()) return ToGrpc(result.status());
  fill(*std::move(result));
  return grpc::Status::OK;
}

// Events of one WatchJob call, from the Scheduler (which must not block) to
// the handler thread that writes them. Bounded: a watcher that cannot keep
// up loses trial events, never the final state.
class EventQueue {
 public:
  static constexpr size_t kMaxQueued = 10000;

  bool Push(const proto::JobEvent& event) {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    if (queue_.size() >= kMaxQueued && event.trial_id() >= 0) {
      ++dropped_;
      return true;
    }
    queue_.push_back(event);
    return true;
  }
  // Waits up to `timeout` for an event.
  std::optional<proto::JobEvent> Pop(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    if (queue_.empty()) return std::nullopt;
    proto::JobEvent e = std::move(queue_.front());
    queue_.pop_front();
    return e;
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }

 private:
  absl::Mutex mu_;
  std::deque<proto::JobEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace

grpc::Status JobServiceImpl::Check(const grpc::ServerContext& context, Action action,
                                   Principal* who) const {
  absl::StatusOr<Principal> caller = AuthenticateContext(tokens_, context);
  if (!caller.ok()) return ToGrpc(caller.status());
  if (!Allowed(caller->role, action)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "this token is not allowed to do that");
  }
  if (who != nullptr) *who = *std::move(caller);
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::CheckOwner(const Principal& who, const std::string& job_id) const {
  if (who.role == Role::kAdmin) return grpc::Status::OK;
  absl::StatusOr<proto::JobStatus> job = scheduler_->GetJob(job_id);
  if (!job.ok()) return ToGrpc(job.status());
  // A job with no owner was stored before jobs had owners (or submitted to
  // a tracker without tokens): every authenticated user may still see it.
  if (!job->spec().owner().empty() && job->spec().owner() != who.user) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("job ", job_id, " belongs to another user"));
  }
  return grpc::Status::OK;
}

namespace {

// Someone else's job as a listing shows it: its state and figures, not its
// configs.
void HideConfigs(proto::JobStatus& status) {
  status.clear_best_config_json();
  for (proto::TaskStatus& task : *status.mutable_tasks()) task.clear_best_config_json();
}

}  // namespace

grpc::Status JobServiceImpl::SubmitJob(grpc::ServerContext* context,
                                       const proto::SubmitJobRequest* request,
                                       proto::SubmitJobResponse* response) {
  Principal who;
  grpc::Status auth = Check(*context, Action::kSubmit, &who);
  if (!auth.ok()) return auth;
  proto::JobSpec spec = request->spec();
  spec.set_owner(who.user);  // never the client's word, nor its quota
  proto::UserQuota* quota = spec.mutable_owner_quota();
  quota->set_max_jobs_in_flight(who.scope.quota.max_jobs_in_flight);
  quota->set_max_trials_per_hour(who.scope.quota.max_trials_per_hour);
  quota->set_max_agent_share(who.scope.quota.max_agent_share);
  return Answer(scheduler_->SubmitJob(spec), [response](proto::JobStatus status) {
    response->set_job_id(status.job_id());
    *response->mutable_status() = std::move(status);
  });
}

grpc::Status JobServiceImpl::GetJob(grpc::ServerContext* context,
                                    const proto::GetJobRequest* request,
                                    proto::JobStatus* response) {
  Principal who;
  grpc::Status auth = Check(*context, Action::kQuery, &who);
  if (!auth.ok()) return auth;
  if (grpc::Status owner = CheckOwner(who, request->job_id()); !owner.ok()) return owner;
  return Answer(scheduler_->GetJob(request->job_id()),
                [response](proto::JobStatus status) { *response = std::move(status); });
}

grpc::Status JobServiceImpl::WatchJob(grpc::ServerContext* context,
                                      const proto::WatchJobRequest* request,
                                      grpc::ServerWriter<proto::JobEvent>* writer) {
  Principal who;
  grpc::Status auth = Check(*context, Action::kQuery, &who);
  if (!auth.ok()) return auth;
  if (grpc::Status owner = CheckOwner(who, request->job_id()); !owner.ok()) return owner;
  auto queue = std::make_shared<EventQueue>();
  absl::StatusOr<int64_t> subscription = scheduler_->WatchJob(
      request->job_id(), [queue](const proto::JobEvent& e) { return queue->Push(e); });
  if (!subscription.ok()) return ToGrpc(subscription.status());
  grpc::Status result = grpc::Status::OK;
  while (true) {
    if (context->IsCancelled() || shutdown_) {
      result = grpc::Status(grpc::StatusCode::CANCELLED, "watch ended");
      break;
    }
    std::optional<proto::JobEvent> event = queue->Pop(absl::Milliseconds(200));
    if (!event.has_value()) continue;
    const bool final_event = event->trial_id() < 0 && IsFinalJobState(event->status().state());
    if (!writer->Write(*event)) break;
    if (final_event) break;
  }
  queue->Close();
  scheduler_->Unwatch(*subscription);
  return result;
}

grpc::Status JobServiceImpl::CancelJob(grpc::ServerContext* context,
                                       const proto::CancelJobRequest* request,
                                       proto::JobStatus* response) {
  Principal who;
  grpc::Status auth = Check(*context, Action::kCancel, &who);
  if (!auth.ok()) return auth;
  if (grpc::Status owner = CheckOwner(who, request->job_id()); !owner.ok()) return owner;
  return Answer(scheduler_->CancelJob(request->job_id()),
                [response](proto::JobStatus status) { *response = std::move(status); });
}

grpc::Status JobServiceImpl::ListJobs(grpc::ServerContext* context,
                                      const proto::ListJobsRequest* request,
                                      proto::ListJobsResponse* response) {
  Principal who;
  grpc::Status auth = Check(*context, Action::kQuery, &who);
  if (!auth.ok()) return auth;
  for (proto::JobStatus& s : scheduler_->ListJobs(request->include_finished())) {
    if (who.role != Role::kAdmin && !s.spec().owner().empty() && s.spec().owner() != who.user) {
      HideConfigs(s);
    }
    *response->add_jobs() = std::move(s);
  }
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::BestConfig(grpc::ServerContext* context,
                                        const proto::BestConfigRequest* request,
                                        proto::BestConfigResponse* response) {
  Principal who;
  grpc::Status auth = Check(*context, Action::kQuery, &who);
  if (!auth.ok()) return auth;
  if (request->job_id().empty() && who.role != Role::kAdmin) {
    return grpc::Status(
        grpc::StatusCode::PERMISSION_DENIED,
        "the best of every job's records needs an admin token; name a job of yours");
  }
  if (!request->job_id().empty()) {
    if (grpc::Status owner = CheckOwner(who, request->job_id()); !owner.ok()) return owner;
  }
  return Answer(scheduler_->BestConfig(*request),
                [response](proto::BestConfigResponse best) { *response = std::move(best); });
}

grpc::Status JobServiceImpl::ExportRecords(grpc::ServerContext* context,
                                           const proto::ExportRecordsRequest* request,
                                           grpc::ServerWriter<proto::RecordLines>* writer) {
  Principal who;
  grpc::Status auth = Check(*context, Action::kQuery, &who);
  if (!auth.ok()) return auth;
  if (request->job_id().empty() && who.role != Role::kAdmin) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "exporting every job's records needs an admin token; name a job of yours");
  }
  if (!request->job_id().empty()) {
    if (grpc::Status owner = CheckOwner(who, request->job_id()); !owner.ok()) return owner;
  }
  absl::StatusOr<std::vector<std::string>> lines = scheduler_->ExportRecords(*request);
  if (!lines.ok()) return ToGrpc(lines.status());
  constexpr size_t kChunkBytes = 1 << 20;
  proto::RecordLines chunk;
  size_t bytes = 0;
  for (std::string& line : *lines) {
    bytes += line.size();
    chunk.add_lines(std::move(line));
    if (bytes >= kChunkBytes) {
      if (!writer->Write(chunk))
        return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
      chunk.Clear();
      bytes = 0;
    }
  }
  if (chunk.lines_size() > 0 && !writer->Write(chunk)) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
  }
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::ListDevices(grpc::ServerContext* context,
                                         const proto::ListDevicesRequest*,
                                         proto::ListDevicesResponse* response) {
  grpc::Status auth = Check(*context, Action::kQuery);
  if (!auth.ok()) return auth;
  *response = scheduler_->ListDevices();
  return grpc::Status::OK;
}

grpc::Status JobServiceImpl::QueueSummary(grpc::ServerContext* context,
                                          const proto::QueueSummaryRequest*,
                                          proto::QueueSummaryResponse* response) {
  grpc::Status auth = Check(*context, Action::kQuery);
  if (!auth.ok()) return auth;
  *response = scheduler_->QueueSummary();
  return grpc::Status::OK;
}

}  // namespace tunefleet
