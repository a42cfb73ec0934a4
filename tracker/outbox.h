// Outbox: one worker stream as the scheduler sees it. The gRPC layer
// (worker_gateway.cc) implements it over a Connect stream; tests use a fake
// that records what was sent. Every part of the scheduler that talks to a
// worker (registration replies, leases, trial updates, errors) goes through
// the worker's Outbox, so none of them links gRPC.
#ifndef TUNEFLEET_TRACKER_OUTBOX_H_
#define TUNEFLEET_TRACKER_OUTBOX_H_

#include "absl/status/status.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

class Outbox {
 public:
  virtual ~Outbox() = default;
  // Queues `message` on the stream. Called with the scheduler's lock held:
  // must not block or call the Scheduler.
  virtual void Send(proto::TrackerMessage message) = 0;
  // Ends the stream with `status` (the worker will reconnect). The
  // scheduler calls OnDisconnect itself after closing; the stream layer
  // must not call it again for this worker.
  virtual void Close(const absl::Status& status) = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_OUTBOX_H_
