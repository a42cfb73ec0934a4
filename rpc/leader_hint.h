// Following the tracker's leader. Trackers that share a PostgreSQL store run
// as replicas (tracker/replica.h): one leads, the others answer every call
// with UNAVAILABLE and name the leader in the trailing metadata
// `tunefleet-leader`. Workers and clients are given one address (a
// Kubernetes Service) or a comma-separated list of replicas, and dial the
// leader a standby named, else the next address of the list, with their
// usual backoff.
//
//   TrackerAddresses trackers("tracker-0:7070,tracker-1:7070", plaintext);
//   ... a call on trackers.current() fails UNAVAILABLE ...
//   if (trackers.Advance(LeaderHint(context))) { /* dial trackers.current() */ }
#ifndef TUNEFLEET_RPC_LEADER_HINT_H_
#define TUNEFLEET_RPC_LEADER_HINT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"

namespace tunefleet {

// The trailing metadata key a standby names the leader under.
inline constexpr char kLeaderMetadataKey[] = "tunefleet-leader";

// The leader a standby named in a finished call's trailing metadata; empty
// when it named none (or the call never reached a tracker).
std::string LeaderHint(const grpc::ClientContext& context);

// The tracker addresses of a flag ("a:7070, b:7070"), in order, and which
// one to dial now.
class TrackerAddresses {
 public:
  // `plaintext`: the channel has no TLS, so a named leader is followed only
  // when it is a loopback address or one of the listed ones (which the
  // plaintext policy already allowed): a standby cannot send a plaintext
  // client's token to an address of its choosing.
  TrackerAddresses(absl::string_view flag, bool plaintext);

  const std::string& current() const { return current_; }
  size_t size() const { return listed_.size(); }
  // After a call or session on current() failed: the leader `hint` names
  // (when it may be followed), else the next listed address. True when
  // current() changed.
  bool Advance(const std::string& hint);

 private:
  std::vector<std::string> listed_;
  bool plaintext_;
  size_t next_ = 0;  // the listed address after current_
  std::string current_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_RPC_LEADER_HINT_H_
