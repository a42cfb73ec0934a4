#include "tracker/store/store.h"

#include <sodium.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tunefleet {

std::string NewLeaseKey() {
  static_assert(kLeaseKeyHexDigits % 2 == 0);
  unsigned char bytes[kLeaseKeyHexDigits / 2];
  // sodium_init is idempotent and thread-safe. randombytes_buf works without
  // it too (on the system's generator), so a failure here costs nothing but
  // the generator libsodium would have chosen; say so, once per key.
  if (sodium_init() < 0) {
    TF_LOG(WARNING) << "libsodium failed to initialise; lease key drawn anyway";
  }
  randombytes_buf(bytes, sizeof(bytes));
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
}

StoredJob DamagedJob(const StoredJob& job, const absl::Status& damage,
                     absl::string_view repair_hint) {
  TF_LOG(ERROR) << damage.message() << "; the job is reported FAILED, its row is left as it was";
  StoredJob failed;
  failed.job_id = job.job_id;
  failed.sequence = job.sequence;
  failed.state = proto::FAILED;
  failed.message = absl::StrCat(kDamagedRowMessage, damage.message(), "; ", repair_hint);
  return failed;
}

[[nodiscard]] absl::StatusOr<proto::JobState> StoredJobState(int64_t state,
                                                             absl::string_view what) {
  if (state < INT32_MIN || state > INT32_MAX || !proto::JobState_IsValid(static_cast<int>(state))) {
    return absl::DataLossError(absl::StrCat(what, ": state ", state, " is not a JobState"));
  }
  return static_cast<proto::JobState>(state);
}

}  // namespace tunefleet
