// IsFinalJobState: whether a proto::JobState can still change. For the
// tracker, the CLI and the tests, wherever they wait for a job to end.
#ifndef TUNEFLEET_PROTO_CONVERT_JOB_STATE_H_
#define TUNEFLEET_PROTO_CONVERT_JOB_STATE_H_

#include "proto/fleet.pb.h"

namespace tunefleet {

// SUCCEEDED, FAILED or CANCELLED: the job will not change again.
inline bool IsFinalJobState(proto::JobState state) {
  return state == proto::SUCCEEDED || state == proto::FAILED || state == proto::CANCELLED;
}

}  // namespace tunefleet

#endif  // TUNEFLEET_PROTO_CONVERT_JOB_STATE_H_
