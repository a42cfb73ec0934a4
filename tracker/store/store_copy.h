// CopyStore: every job, trial and record of one store into another, as
// `tunefleet_tracker --store=<sqlite file> --store_migrate=postgresql://...`
// does to move a one-host tracker onto replicas sharing PostgreSQL.
//
//   TF_ASSIGN_OR_RETURN(StoreCopy copied, CopyStore(*sqlite, *postgres));
//
// The target must hold no job (FailedPrecondition otherwise: a copy never
// merges into a store in use). Jobs are copied in sequence order, each with
// all its trials; a job whose trials cannot be read (DataLoss) stops the
// copy naming it, with nothing of it written: repair the source first
// (--store_check). A job whose row was damaged loads as FAILED with a
// message naming the damage (store.h), and is copied as such and counted.
// The copy is not one transaction: after a failure, empty the target
// database and run it again.
#ifndef TUNEFLEET_TRACKER_STORE_STORE_COPY_H_
#define TUNEFLEET_TRACKER_STORE_STORE_COPY_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "tracker/store/store.h"

namespace tunefleet {

struct StoreCopy {
  int64_t jobs = 0;
  int64_t trials = 0;
  int64_t damaged_jobs = 0;  // copied as FAILED, naming the damage
};

[[nodiscard]] absl::StatusOr<StoreCopy> CopyStore(Store& from, Store& to);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_STORE_STORE_COPY_H_
