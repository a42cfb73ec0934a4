// FakeOutbox: an Outbox (outbox.h) that records what the scheduler sends and
// whether it closed the stream, for tests of the scheduler and its parts.
//
//   auto outbox = std::make_shared<FakeOutbox>();
//   ... scheduler_->RegisterWorker(registration, "test", outbox);
//   EXPECT_EQ(outbox->Take(proto::TrackerMessage::kBuild).size(), 1u);
#ifndef TUNEFLEET_TRACKER_FAKE_OUTBOX_H_
#define TUNEFLEET_TRACKER_FAKE_OUTBOX_H_

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "proto/fleet.pb.h"
#include "tracker/outbox.h"

namespace tunefleet {

class FakeOutbox final : public Outbox {
 public:
  void Send(proto::TrackerMessage message) override { sent.push_back(std::move(message)); }
  void Close(const absl::Status& status) override { closed = status; }

  // Removes and returns the messages of one kind, in the order sent.
  std::vector<proto::TrackerMessage> Take(proto::TrackerMessage::KindCase kind) {
    std::vector<proto::TrackerMessage> out, keep;
    for (auto& m : sent) (m.kind_case() == kind ? out : keep).push_back(std::move(m));
    sent = std::move(keep);
    return out;
  }

  std::vector<proto::TrackerMessage> sent;
  std::optional<absl::Status> closed;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_FAKE_OUTBOX_H_
