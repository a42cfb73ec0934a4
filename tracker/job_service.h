// JobService: the users' API of the tracker (submit, watch, cancel, list,
// best config, export, fleet queries), on gRPC's synchronous API. Every
// call is authenticated (tracker/auth.h) and answered from the Scheduler.
#ifndef TUNEFLEET_TRACKER_JOB_SERVICE_H_
#define TUNEFLEET_TRACKER_JOB_SERVICE_H_

#include <atomic>

#include "proto/fleet.grpc.pb.h"
#include "tracker/auth.h"
#include "tracker/scheduler.h"

namespace tunefleet {

class JobServiceImpl final : public proto::JobService::Service {
 public:
  // `tokens` null = authentication off (loopback-only deployments).
  JobServiceImpl(Scheduler* scheduler, const TokenSet* tokens)
      : scheduler_(scheduler), tokens_(tokens) {}

  // Ends open WatchJob streams (server shutdown).
  void Shutdown() { shutdown_ = true; }

  grpc::Status SubmitJob(grpc::ServerContext* context, const proto::SubmitJobRequest* request,
                         proto::SubmitJobResponse* response) override;
  grpc::Status GetJob(grpc::ServerContext* context, const proto::GetJobRequest* request,
                      proto::JobStatus* response) override;
  grpc::Status WatchJob(grpc::ServerContext* context, const proto::WatchJobRequest* request,
                        grpc::ServerWriter<proto::JobEvent>* writer) override;
  grpc::Status CancelJob(grpc::ServerContext* context, const proto::CancelJobRequest* request,
                         proto::JobStatus* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context, const proto::ListJobsRequest* request,
                        proto::ListJobsResponse* response) override;
  grpc::Status BestConfig(grpc::ServerContext* context, const proto::BestConfigRequest* request,
                          proto::BestConfigResponse* response) override;
  grpc::Status ExportRecords(grpc::ServerContext* context,
                             const proto::ExportRecordsRequest* request,
                             grpc::ServerWriter<proto::RecordLines>* writer) override;
  grpc::Status ListDevices(grpc::ServerContext* context, const proto::ListDevicesRequest* request,
                           proto::ListDevicesResponse* response) override;
  grpc::Status QueueSummary(grpc::ServerContext* context, const proto::QueueSummaryRequest* request,
                            proto::QueueSummaryResponse* response) override;

 private:
  // OK if the caller's token allows `action`; fills `who` when given.
  grpc::Status Check(const grpc::ServerContext& context, Action action,
                     Principal* who = nullptr) const;
  // OK if `who` may see job `job_id`: an admin, the user who submitted it,
  // or anyone for a job without an owner (stored before jobs had owners).
  grpc::Status CheckOwner(const Principal& who, const std::string& job_id) const;

  Scheduler* const scheduler_;
  const TokenSet* const tokens_;
  std::atomic<bool> shutdown_{false};
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_JOB_SERVICE_H_
