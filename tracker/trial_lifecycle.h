// TrialLifecycle: every transition of a trial and of its job, and the rule
// that binds them to the store: a transition is written first
// and acknowledged (to the tuner, to watchers, in the counters) only once
// the write succeeded.
//
//   proposed --Propose--> to_build --(Dispatcher: lease)--> building
//   building --Built--> to_measure --(Dispatcher: lease)--> measuring
//   measuring --Measured--> done            any stage --error--> done
//   building|measuring --(LeaseKeeper: worker lost)--> Requeue | GiveUp
//   search over --StartValidation--> validation measurements (like trials)
//   all measured --FinishValidation--> validated records --> job ends
//
// Store failures, case by case:
//  - proposed trials: the whole proposal is refused (the tuner is told why
//    in TrialsAccepted.rejected); nothing was created.
//  - a result (Finish): the trial holds its result in kResultUnstored and
//    nothing is acknowledged; RetryStoreWrites (every tick) writes it again
//    and acknowledges it then. The job's status message says why meanwhile.
//  - a requeue after a lost worker: the trial waits in kRequeueUnstored,
//    out of every queue, until its attempt count is stored.
//  - the job starting (a tuner takes it): Start fails, the job stays QUEUED
//    and unassigned; the Dispatcher tries again on the next tick.
//  - the job ending: End fails and the job keeps running; CancelJob returns
//    the error, a job whose trials are all done tries again every tick.
//
// Not thread-safe: the Scheduler facade calls everything under its one mutex.
#ifndef TUNEFLEET_TRACKER_TRIAL_LIFECYCLE_H_
#define TUNEFLEET_TRACKER_TRIAL_LIFECYCLE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/clock.h"
#include "proto/fleet.pb.h"
#include "tracker/job_table.h"
#include "tracker/metrics_interface.h"
#include "tracker/scheduler_options.h"
#include "tracker/store/store.h"
#include "tracker/store_writer.h"
#include "tracker/worker_registry.h"
#include "tuner_core/measure/measure.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

class TrialLifecycle {
 public:
  // Every pointer must outlive the lifecycle; `metrics` may be null.
  TrialLifecycle(const SchedulerOptions* options, JobTable* jobs, WorkerRegistry* workers,
                 StoreWriter* writer, TrackerMetricsInterface* metrics, ClockInterface* clock)
      : options_(options),
        jobs_(jobs),
        workers_(workers),
        writer_(writer),
        metrics_(metrics),
        clock_(clock) {}

  // ---- jobs
  // Loads every job of `store` into the table (finished ones with their
  // per-task counts and best); unfinished ones go back to QUEUED with their
  // unfinished trials to be built again. A job whose tasks no longer load,
  // or one of whose trials names no task of it, is failed (and that is
  // stored) so the others resume.
  [[nodiscard]] absl::Status Resume(Store& store);
  // A new QUEUED job with a completed spec (CompleteJobSpec) and its tasks
  // (LoadJobTasks); the store's error if its row cannot be written (nothing
  // is added).
  [[nodiscard]] absl::StatusOr<Job*> Submit(proto::JobSpec spec, std::vector<JobTask> tasks);
  // QUEUED -> RUNNING once a tuner holds it (job.tuner_worker set); a no-op
  // for a RUNNING job. On a store error nothing changes.
  [[nodiscard]] absl::Status Start(Job& job);
  // Ends the job: queued work is dropped, its tuner released, watchers told
  // and unsubscribed. On a store error nothing changes.
  [[nodiscard]] absl::Status End(Job& job, proto::JobState state, const std::string& message);
  // Once all n_trial trials are done, or the tuner ended the search and
  // nothing is in flight: validates the winners (tracker/validation.h),
  // then ends the job (SUCCEEDED, or FAILED when every trial failed).
  void MaybeFinish(Job& job);

  // ---- trials
  // The tuner's proposal: accepted configs become trials to build; the
  // tuner gets TrialsAccepted with the ids and a reason per refused config.
  void Propose(Job& job, Worker& tuner, const proto::ProposeTrials& propose, double received_at);
  // A build lease came back: the trial waits to be measured, or ends with
  // the build's error. `job` must not be finished.
  void Built(Job& job, Trial& trial, const proto::BuildResult& result, const Worker& builder,
             double received_at);
  // A measure lease came back: the trial ends with the agent's costs or error.
  // `job` must not be finished.
  void Measured(Job& job, Trial& trial, const proto::MeasureResult& result, const Worker& agent);
  // The worker holding the trial in `lost_stage` was lost (attempts already
  // counted): back to the front of its queue once the store has the count.
  void Requeue(Job& job, Trial& trial, Stage lost_stage, const std::string& reason);
  // The same, after max_attempts: the trial ends with an error result that
  // says why.
  void GiveUp(Job& job, Trial& trial, Stage lost_stage, const std::string& reason);
  // Fails every job with a queue_timeout_s whose key has had no agent for
  // that long (FAILED, saying so). Call every tick.
  void FailJobsWithoutAgents();
  // Writes again what the store refused before and acknowledges what it
  // takes now. Call every tick.
  void RetryStoreWrites();

  proto::JobStatus StatusOf(const Job& job) const;

 private:
  void Finish(Job& job, Trial& trial, proto::TrialResult result);
  // The search is over: stores and queues the validation measurements.
  // False when there is nothing to validate; true when they were queued or
  // the store refused them (job.store_error says so; retried every tick).
  bool StartValidation(Job& job);
  // Every validation measurement is done: stores the validated records and
  // applies them; false (job.store_error says why) when the store refused.
  bool FinishValidation(Job& job);
  // After the trial's result is stored: counters, best, tuner, watchers.
  void Acknowledge(Job& job, Trial& trial);
  // After the trial's attempt count is stored: into its queue.
  void Enqueue(Job& job, Trial& trial, const std::string& reason);
  void HoldForStore(Job& job, Trial& trial, TrialState state, const absl::Status& why);
  // The stored trials of `job` into it (counts, best; unfinished ones of a
  // running job queued to build again); "" or why a row does not fit.
  std::string LoadTrials(Job& job, std::vector<StoredTrial>& rows);
  // Counts a done trial in its task (done, failed, best) and the job.
  void CountOutcome(Job& job, const Trial& trial);
  // One event to the job's watchers; `trial` null for a job-level event.
  void Publish(Job& job, const Trial* trial);
  proto::TrialResult ErrorResult(MeasureErrorNo error_no, const std::string& message);

  const SchedulerOptions* const options_;
  JobTable* const jobs_;
  WorkerRegistry* const workers_;
  StoreWriter* const writer_;
  TrackerMetricsInterface* const metrics_;
  ClockInterface* const clock_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_TRIAL_LIFECYCLE_H_
