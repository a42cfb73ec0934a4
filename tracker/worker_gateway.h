// WorkerGateway.Connect, the stream every builder, agent and tuner holds
// with the tracker, on gRPC's callback API: one reactor per stream and no
// thread per connection, so a tracker holds thousands of agents.
//
// The first message on a stream must be Register; the caller's token must
// allow that role (tracker/auth.h). The token is checked on the service's
// own thread, not on gRPC's callback threads (which carry every worker's
// heartbeats): a new token costs Argon2 (64 MiB, tens of ms), so a flood of
// unknown ones delays other streams' registrations at most, never their
// messages. At most kMaxPendingAuth streams wait for the check; beyond that
// a stream is refused at once (RESOURCE_EXHAUSTED). Everything after goes to the Scheduler;
// the Scheduler's messages come back through the stream's Outbox, queued and
// written one at a time.
#ifndef TUNEFLEET_TRACKER_WORKER_GATEWAY_H_
#define TUNEFLEET_TRACKER_WORKER_GATEWAY_H_

#include <deque>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "proto/fleet.grpc.pb.h"
#include "tracker/auth.h"
#include "tracker/metrics_interface.h"
#include "tracker/scheduler.h"

namespace tunefleet {

class WorkerGatewayService final : public proto::WorkerGateway::CallbackService {
 public:
  // `tokens` null = authentication off (loopback-only deployments);
  // `metrics` may be null.
  WorkerGatewayService(Scheduler* scheduler, const TokenSet* tokens,
                       TrackerMetricsInterface* metrics);
  // Checks what is still waiting, then joins the checking thread.
  ~WorkerGatewayService() override;

  grpc::ServerBidiReactor<proto::WorkerMessage, proto::TrackerMessage>* Connect(
      grpc::CallbackServerContext* context) override;

  static constexpr size_t kMaxPendingAuth = 1024;

 private:
  struct PendingAuth {
    CallCredentials call;
    std::function<void(absl::StatusOr<Principal>)> done;
  };
  void AuthLoop();

  Scheduler* const scheduler_;
  const TokenSet* const tokens_;
  TrackerMetricsInterface* const metrics_;

  absl::Mutex mu_;
  std::deque<PendingAuth> pending_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread auth_thread_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_WORKER_GATEWAY_H_
