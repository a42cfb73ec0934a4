// Lease ids that a tracker can check without having given them, so that a
// replica that took over (or a tracker restarted on its store) accepts the
// result of a lease its predecessor gave, and only that. An id names the
// job, trial and stage it leases and carries an HMAC-SHA256 (libsodium) of
// them and of the worker's registered name under the store's lease key
// (Store::LeaseKey), so a worker can claim no trial it was not given, and
// no other worker's lease.
//
//   TF_ASSIGN_OR_RETURN(LeaseTokens tokens, LeaseTokens::FromHexKey(*store->LeaseKey()));
//   std::string id = tokens.Mint({job_id, trial_id, Stage::kMeasure, serial}, worker_name);
//   absl::StatusOr<LeaseClaim> claim = tokens.Verify(id, worker_name);
//
// The id: "L<instance>-<serial>.<b|m>.<trial_id>.<mac>.<job_id>", where
// `instance` is random per LeaseTokens (ids of two trackers never collide)
// and `mac` 32 hex digits; the job id comes last, as it may hold dots.
#ifndef TUNEFLEET_TRACKER_LEASE_TOKENS_H_
#define TUNEFLEET_TRACKER_LEASE_TOKENS_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tracker/job_table.h"
#include "tracker/store/store.h"

namespace tunefleet {

// What a lease id says it leases.
struct LeaseClaim {
  std::string job_id;
  int64_t trial_id = 0;
  Stage stage = Stage::kBuild;
};

// The longest lease id Verify reads (a job id is at most a few dozen bytes).
inline constexpr size_t kMaxLeaseIdBytes = 512;

class LeaseTokens {
 public:
  // `hex_key`: Store::LeaseKey(). InvalidArgument when it is not kLeaseKeyHexDigits hex digits.
  [[nodiscard]] static absl::StatusOr<LeaseTokens> FromHexKey(absl::string_view hex_key);

  // A new lease id for `claim`, given to the worker registered as `worker_name`.
  std::string Mint(const LeaseClaim& claim, absl::string_view worker_name);
  // The claim of `lease_id` when this key minted it for `worker_name`;
  // InvalidArgument naming what is wrong (not a lease id of this form, or a
  // signature that does not match: another store's, another worker's, or
  // altered).
  [[nodiscard]] absl::StatusOr<LeaseClaim> Verify(absl::string_view lease_id,
                                                  absl::string_view worker_name) const;

 private:
  LeaseTokens() = default;
  std::string Mac(absl::string_view serial, char stage, int64_t trial_id, absl::string_view job_id,
                  absl::string_view worker_name) const;

  std::array<unsigned char, kLeaseKeyHexDigits / 2> key_{};
  std::string instance_;  // random, per LeaseTokens
  int64_t next_serial_ = 1;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_LEASE_TOKENS_H_
