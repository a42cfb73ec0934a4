#include "tracker/store/store.h"

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace tunefleet {

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
