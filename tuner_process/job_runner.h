// One job in the tuner process: its task, its search strategy and the count
// of trials in flight, driven by the tracker's messages with no batch
// barrier. The tuner keeps `window` trials in flight and proposes more as
// results arrive, so builds of new trials overlap measurements of earlier
// ones. No gRPC here (tuner_service.h does the stream), so tests drive it
// directly:
//
//   TF_ASSIGN_OR_RETURN(auto runner, JobRunner::Create(assignment));
//   proto::ProposeTrials p = runner->NextProposals();   // send it
//   runner->OnAccepted(accepted);                       // tracker's answer
//   runner->OnTrialUpdate(update);                      // a result
//   p = runner->NextProposals();                        // send again
//
// A JobRunner is rebuilt from every JobAssignment: the assignment lists all
// trials the tracker knows (done ones with results), so a tuner that takes
// over a job, after its predecessor or the tracker died, marks them visited,
// learns from the done ones and never proposes a config twice.
//
// Threading: one thread at a time.
#ifndef TUNEFLEET_TUNER_PROCESS_JOB_RUNNER_H_
#define TUNEFLEET_TUNER_PROCESS_JOB_RUNNER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "proto/fleet.pb.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/tuner.h"

namespace tunefleet {

class JobRunner {
 public:
  // InvalidArgument when the job's task or tuner cannot be made.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<JobRunner>> Create(
      const proto::JobAssignment& assignment);

  // New configs to propose now: enough to fill the window, never beyond the
  // job's n_trial, never a config proposed before. `finished` is set once
  // (the search space is exhausted or early stopping triggered), and from
  // then on nothing more is proposed. Empty when there is nothing to send.
  proto::ProposeTrials NextProposals();
  // The tracker's answer to a proposal: rejected configs leave the window.
  void OnAccepted(const proto::TrialsAccepted& accepted);
  // A trial of this job finished.
  void OnTrialUpdate(const proto::TrialUpdate& update);

  const std::string& job_id() const { return job_id_; }
  int64_t done() const { return done_; }
  int64_t in_flight() const { return in_flight_; }
  double best_gflops() const { return best_gflops_; }
  // The AutoTVM progress line of this job.
  std::string Progress() const;

 private:
  JobRunner(std::string job_id, proto::JobSpec spec, std::unique_ptr<Task> task,
            std::unique_ptr<Tuner> tuner)
      : job_id_(std::move(job_id)),
        spec_(std::move(spec)),
        task_(std::move(task)),
        tuner_(std::move(tuner)) {}

  void Learn(const std::string& config_json, const proto::TrialResult& result);

  const std::string job_id_;
  const proto::JobSpec spec_;
  std::unique_ptr<Task> task_;
  std::unique_ptr<Tuner> tuner_;  // after task_: destroyed first, it points into it
  int32_t window_ = 8;
  int64_t known_ = 0;      // trials the tracker holds or we proposed
  int64_t in_flight_ = 0;  // proposed, not yet done
  int64_t done_ = 0;
  int64_t best_trial_ = -1;  // 0-based count of done trials when the best came
  double best_cost_ = 0;
  double best_gflops_ = 0;
  double last_gflops_ = 0;
  bool finished_sent_ = false;
  double started_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_PROCESS_JOB_RUNNER_H_
