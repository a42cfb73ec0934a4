// The one interface a job's search goes through, whoever carries out its
// trials: the tracker's stream (tuner_process/tuner_service.cc hands each
// proposal to the tracker, whose answers come later, one message at a time,
// to OnAccepted and OnTrialUpdate) or local mode's in-process fleet
// (local/local_job.cc builds and measures the proposed configs at once and
// answers before it returns). Both drive their JobRunner with Pump, after
// creating it and after every answer that arrives later:
//
//   class StreamFleet : public TrialExecutor { ... send, return false ... };
//   TF_RETURN_IF_ERROR(Pump(*runner, fleet));
//
// Threading: as JobRunner's, one thread at a time.
#ifndef TUNEFLEET_JOB_DRIVER_TRIAL_EXECUTOR_H_
#define TUNEFLEET_JOB_DRIVER_TRIAL_EXECUTOR_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "job_driver/job_runner.h"
#include "proto/fleet.pb.h"

namespace tunefleet {

class TrialExecutor {
 public:
  virtual ~TrialExecutor() = default;

  // Carries out `proposals` (configs to try, or `finished`) of `runner`'s
  // job. True when it answered them before returning (runner.OnAccepted for
  // the proposal, then runner.OnTrialUpdate for each trial it accepted), so
  // the runner may propose again at once; false when the answers come later.
  // An error stops the driving; the runner keeps what the answers so far
  // told it.
  [[nodiscard]] virtual absl::StatusOr<bool> Execute(JobRunner& runner,
                                                     const proto::ProposeTrials& proposals) = 0;
};

// Hands `executor` what `runner` proposes now and, while the executor
// answers at once, what it proposes next, until the runner has nothing to
// send (its window is full of trials in flight, or the job is done and
// `finished` was sent). The executor's errors.
[[nodiscard]] absl::Status Pump(JobRunner& runner, TrialExecutor& executor);

}  // namespace tunefleet

#endif  // TUNEFLEET_JOB_DRIVER_TRIAL_EXECUTOR_H_
