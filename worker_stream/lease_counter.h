// LeaseCounter: the work a lease-serving role (builder, device agent) holds,
// i.e. leases handed to its service and not answered yet; what its
// WorkerRoleInterface::InFlight() returns and a drain waits for.
//
//   void OnMessage(const proto::TrackerMessage& m) override {
//     leases_.Took();
//     service_->Handle(m.build(), [this](proto::BuildResult r) {
//       proto::WorkerMessage message;  *message.mutable_build_result() = std::move(r);
//       leases_.Answer(*worker_, message);
//     });
//   }
//   void OnSession(const proto::Registered& r) override { leases_.Dropped(service_->DropQueued(),
//   r.worker_id(), "builds"); } int64_t InFlight() const override { return leases_.count(); }
//
// Thread-safe.
#ifndef TUNEFLEET_WORKER_STREAM_LEASE_COUNTER_H_
#define TUNEFLEET_WORKER_STREAM_LEASE_COUNTER_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "proto/fleet.pb.h"
#include "worker_stream/worker_daemon.h"

namespace tunefleet {

class LeaseCounter {
 public:
  // A lease was handed to the service.
  void Took();
  // Sends the lease's answer, then stops counting it (in that order, so a
  // drain never closes the stream between the two). Returns Send's result.
  bool Answer(WorkerDaemon& worker, const proto::WorkerMessage& answer);
  // `dropped` queued leases were forgotten unanswered because a new session
  // (`worker_id`) began; logs how many `what` ("builds") when any.
  void Dropped(int64_t dropped, const std::string& worker_id, absl::string_view what);
  int64_t count() const;

 private:
  mutable absl::Mutex mu_;
  int64_t count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_WORKER_STREAM_LEASE_COUNTER_H_
