// WorkerGateway.Connect, the stream every builder, agent and tuner holds
// with the tracker, on gRPC's callback API: one reactor per stream and no
// thread per connection, so a tracker holds thousands of agents.
//
// The first message on a stream must be Register; the caller's token must
// allow that role (tracker/auth.h). Everything after goes to the Scheduler;
// the Scheduler's messages come back through the stream's Outbox, queued and
// written one at a time.
#ifndef TUNEFLEET_TRACKER_WORKER_GATEWAY_H_
#define TUNEFLEET_TRACKER_WORKER_GATEWAY_H_

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
                       TrackerMetricsInterface* metrics)
      : scheduler_(scheduler), tokens_(tokens), metrics_(metrics) {}

  grpc::ServerBidiReactor<proto::WorkerMessage, proto::TrackerMessage>* Connect(
      grpc::CallbackServerContext* context) override;

 private:
  Scheduler* const scheduler_;
  const TokenSet* const tokens_;
  TrackerMetricsInterface* const metrics_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_WORKER_GATEWAY_H_
