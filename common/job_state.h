// Job states shared by the tracker, the CLI and the tests.
#ifndef TUNEFLEET_COMMON_JOB_STATE_H_
#define TUNEFLEET_COMMON_JOB_STATE_H_

#include "proto/fleet.pb.h"

namespace tunefleet {

// SUCCEEDED, FAILED or CANCELLED: the job will not change again.
inline bool IsFinalJobState(proto::JobState state) {
  return state == proto::SUCCEEDED || state == proto::FAILED || state == proto::CANCELLED;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_JOB_STATE_H_
