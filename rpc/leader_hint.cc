#include "rpc/leader_hint.h"

#include <algorithm>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "rpc/plaintext_policy.h"

namespace tunefleet {

std::string LeaderHint(const grpc::ClientContext& context) {
  const std::multimap<grpc::string_ref, grpc::string_ref>& trailers =
      context.GetServerTrailingMetadata();
  auto it = trailers.find(kLeaderMetadataKey);
  if (it == trailers.end()) return "";
  return std::string(it->second.data(), it->second.size());
}

TrackerAddresses::TrackerAddresses(absl::string_view flag, bool plaintext) : plaintext_(plaintext) {
  for (absl::string_view one : absl::StrSplit(flag, ',', absl::SkipWhitespace())) {
    listed_.emplace_back(absl::StripAsciiWhitespace(one));
  }
  if (listed_.empty()) listed_.emplace_back(flag);
  current_ = listed_[0];
  next_ = 1 % listed_.size();
}

bool TrackerAddresses::Advance(const std::string& hint) {
  const std::string before = current_;
  const bool listed = std::find(listed_.begin(), listed_.end(), hint) != listed_.end();
  if (!hint.empty() && (!plaintext_ || listed || IsLoopbackAddress(hint))) {
    current_ = hint;
  } else {
    current_ = listed_[next_];
    next_ = (next_ + 1) % listed_.size();
  }
  return current_ != before;
}

}  // namespace tunefleet
