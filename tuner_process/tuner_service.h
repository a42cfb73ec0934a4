// The tuner process's side of the fleet: a WorkerDaemon (role TUNER) that
// takes the jobs the tracker assigns (up to max_jobs at once), runs one
// JobRunner per job and sends its proposals as results arrive (the
// stream's TrialExecutor: job_driver/trial_executor.h).
//
// Everything runs on the stream's reader thread (WorkerConnection), one
// message at a time, so the JobRunners need no locking. A new session
// drops every runner: the tracker reassigns the jobs with all it knows.
// Stop() takes no new job and hands the jobs held back at once by closing
// the stream (a search has no natural end to wait for; the tracker
// reassigns each job with every result it holds, so nothing is lost).
#ifndef TUNEFLEET_TUNER_PROCESS_TUNER_SERVICE_H_
#define TUNEFLEET_TUNER_PROCESS_TUNER_SERVICE_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "job_driver/job_runner.h"
#include "job_driver/trial_executor.h"
#include "worker_stream/worker_daemon.h"

namespace tunefleet {

struct TunerServiceOptions {
  WorkerDaemonOptions worker;
  int max_jobs = 4;
  bool log_progress = true;  // the AutoTVM progress line per job, in the log

  [[nodiscard]] absl::Status Validate() const;
};

class TunerService final : private WorkerRoleInterface, private TrialExecutor {
 public:
  // `options` must be valid (Validate()).
  explicit TunerService(TunerServiceOptions options);
  ~TunerService() override;  // Stop()

  void Start();
  void Stop();

  // Jobs held right now (thread-safe).
  int jobs() const;

 private:
  void OnMessage(const proto::TrackerMessage& message) override;
  void OnSession(const proto::Registered& registered) override;
  // Jobs are handed back, not finished, on Stop(): nothing to wait for.
  int64_t InFlight() const override { return 0; }
  // Pump(runner, *this): its proposals to the tracker.
  void Propose(JobRunner& runner);
  // The stream's side of TrialExecutor: sends the proposal to the tracker,
  // whose answers come later (false).
  [[nodiscard]] absl::StatusOr<bool> Execute(JobRunner& runner,
                                             const proto::ProposeTrials& proposals) override;

  const TunerServiceOptions options_;
  RealClock clock_;  // the jobs' progress lines
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<JobRunner>> runners_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<WorkerDaemon> worker_;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_PROCESS_TUNER_SERVICE_H_
