// The users' side of the tracker's JobService, for the CLI, the tests and
// the benchmarks: one channel, the bearer token on every call, errors as
// absl::Status with the tracker's message.
//
//   TF_ASSIGN_OR_RETURN(FleetAddress fleet, ResolveFleet(tracker_flag, token_file_flag, dir_flag));
//   FleetClient client(fleet);
//   TF_ASSIGN_OR_RETURN(proto::JobStatus job, client.Submit(spec));
//   TF_RETURN_IF_ERROR(client.Watch(job.job_id(), [](const proto::JobEvent& e) { ... }));
#ifndef TUNEFLEET_CLIENTS_CPP_FLEET_CLIENT_H_
#define TUNEFLEET_CLIENTS_CPP_FLEET_CLIENT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"
#include "proto/fleet.grpc.pb.h"
#include "rpc/leader_hint.h"

namespace tunefleet {

struct FleetAddress {
  // host:port of the tracker, or of its replicas ("a:7070,b:7070"): a call a
  // standby refuses goes to the leader it names (rpc/leader_hint.h).
  std::string address;
  std::string token;  // the caller's token; empty when auth is off
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // TLS; null = plaintext (loopback)
};

// Where the tracker is and which token to use: the flags when given, else
// the files `tunefleet up` writes in `fleet_dir` (address, user.token); an
// empty fleet_dir means $TUNEFLEET_DIR, else ./.tunefleet.
[[nodiscard]] absl::StatusOr<FleetAddress> ResolveFleet(const std::string& tracker,
                                                        const std::string& token_file,
                                                        const std::string& fleet_dir);

// Thread-safe. A call refused by a standby tracker is sent again to the
// leader it names (or the next listed replica); a call that fails otherwise
// (unavailable, or no answer before its deadline) is repeated elsewhere only
// when it is safe to repeat (not SubmitJob, not a stream that already
// delivered something).
class FleetClient {
 public:
  explicit FleetClient(const FleetAddress& fleet, double deadline_s = 30);

  [[nodiscard]] absl::StatusOr<proto::JobStatus> Submit(const proto::JobSpec& spec);
  [[nodiscard]] absl::StatusOr<proto::JobStatus> Get(const std::string& job_id);
  [[nodiscard]] absl::StatusOr<proto::JobStatus> Cancel(const std::string& job_id);
  [[nodiscard]] absl::StatusOr<std::vector<proto::JobStatus>> List(bool include_finished);
  [[nodiscard]] absl::StatusOr<proto::BestConfigResponse> Best(
      const proto::BestConfigRequest& request);
  // Record lines of one job (of one of its tasks when task_index >= 0), or
  // of every job when job_id is empty.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> Export(const std::string& job_id,
                                                                int32_t task_index = -1);
  [[nodiscard]] absl::StatusOr<proto::ListDevicesResponse> Devices();
  [[nodiscard]] absl::StatusOr<proto::QueueSummaryResponse> Queue();
  // Calls `on_event` for every event until the job ends (OK), or the
  // stream fails (the error).
  [[nodiscard]] absl::Status Watch(const std::string& job_id,
                                   const std::function<void(const proto::JobEvent&)>& on_event);
  // Waits until the tracker answers its health check (SERVING).
  [[nodiscard]] absl::Status WaitHealthy(double timeout_s);

 private:
  using Stub = proto::JobService::Stub;
  void Prepare(grpc::ClientContext& context, bool with_deadline) const;
  // A channel and stub for trackers_.current().
  void Dial() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  std::shared_ptr<Stub> stub() ABSL_LOCKS_EXCLUDED(mutex_);
  // After a call on the current tracker failed: true when it should be
  // tried again, on the tracker now current (a named leader, or the next
  // listed replica).
  bool Follow(const grpc::Status& status, const grpc::ClientContext& context, bool idempotent)
      ABSL_LOCKS_EXCLUDED(mutex_);
  // `call(stub, context)` returns the grpc::Status of one unary call.
  template <typename Call>
  [[nodiscard]] absl::Status Unary(const char* name, bool idempotent, Call call);

  const FleetAddress fleet_;
  const double deadline_s_;
  absl::Mutex mutex_;
  TrackerAddresses trackers_ ABSL_GUARDED_BY(mutex_);
  std::shared_ptr<grpc::Channel> channel_ ABSL_GUARDED_BY(mutex_);
  std::shared_ptr<Stub> stub_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace tunefleet

#endif  // TUNEFLEET_CLIENTS_CPP_FLEET_CLIENT_H_
