// One job in the tuner process: its tasks (one, or a whole model's), a
// search strategy per task, the task scheduler that spreads the job's trial
// budget over them, and selective tuning when the job asks for it. Driven by
// the tracker's messages with no batch barrier: the runner keeps `window`
// trials in flight (of any of its tasks) and proposes more as results
// arrive, so builds of new trials overlap measurements of earlier ones and
// several tasks of one model are measured at once. No gRPC here
// (tuner_service.h does the stream), so tests drive it directly:
//
//   TF_ASSIGN_OR_RETURN(auto runner, JobRunner::Create(assignment, &clock));
//   proto::ProposeTrials p = runner->NextProposals();   // send it
//   runner->OnAccepted(accepted);                       // tracker's answer
//   runner->OnTrialUpdate(update);                      // a result
//   p = runner->NextProposals();                        // send again
//
// Which task runs next (tuner_core/task_scheduler): spec.task_policy,
// "gradient" (Ansor's: warm-up round, then the largest expected drop of the
// model's estimated latency, per-task early stopping), "round_robin" or
// "sequential" (AutoTVM's tune_tasks: each task in turn). Each task's budget
// is spec.trials_per_task (unset: the job's n_trial for the gradient policy,
// an equal share of it otherwise).
//
// Schedule sharing (spec.share_schedules; by default with the gradient
// policy): a task given trials first tries the best schedule of the fastest
// other task of its template, carried to its own space (MapConfigNearest),
// once per such schedule, while that task runs at a higher throughput.
//
// Transfer between tasks (spec.transfer_between_tasks, off unless true):
// each task's records are offered, at kTransferEvery results and each time
// they double, to the
// tuners of the tasks of its template whose kTransferSources most similar
// tasks (SpaceSimilarity) it is among; the xgb tuners take them as history
// shapes (Tuner::LearnFromOtherTask), weighed by how well they order the
// task's own results.
//
// Selective tuning (spec.selective = "top3" | "5%", tuner_core/selective):
// the tasks are clustered by the similarity of their spaces; only each
// cluster's representative (and every task similar to no other) is tuned
// by the scheduler. When a representative is done, each task that depends
// on it measures the representative's top-k configs carried to the nearest
// configs of its own space (MapConfigNearest; topped up from its own tuner
// when fewer are distinct) and is then done, or, with
// spec.selective_followup_trials = F > 0, goes on tuning from there with its
// own tuner (which has learned those results), scheduled with the other
// tasks, up to k + F trials.
//
// A JobRunner is rebuilt from every JobAssignment: the assignment lists all
// trials the tracker knows (done ones with results), so a tuner that takes
// over a job, after its predecessor or the tracker died, marks them visited,
// replays the done ones in the order their results came (the tuners learn
// them, the task scheduler's state is rebuilt as it was) and never proposes
// a config twice.
//
// Threading: one thread at a time.
#ifndef TUNEFLEET_JOB_DRIVER_JOB_RUNNER_H_
#define TUNEFLEET_JOB_DRIVER_JOB_RUNNER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock.h"
#include "proto/fleet.pb.h"
#include "tuner_core/pretuned/cost_model_prior.h"
#include "tuner_core/records/best_so_far.h"
#include "tuner_core/records/record.h"
#include "tuner_core/selective/selective_plan.h"
#include "tuner_core/task_scheduler/task_scheduler.h"
#include "tuner_core/templates/task.h"
#include "tuner_core/tuners/tuner.h"
#include "tuner_core/tuners/tuner_factory.h"

namespace tunefleet {

class JobRunner {
 public:
  // Transfer between tasks: records are offered at this many results of a
  // task and each time they double, to tasks that learn from at most
  // kTransferSources others.
  static constexpr int kTransferEvery = 32;
  static constexpr int kTransferSources = 3;

  // What a task's target cannot build (Tuner::SetConfigCheck), made per
  // task; its tuner then skips those configs before proposing them. Local
  // mode passes one (it resolves the target itself); without one, a task
  // whose spec carries the vectors its submitter resolved (TaskSpec.vectors,
  // as `submit` sets them) is checked against those, so the fleet's tuner
  // skips them too; a task without either is checked by its builders only.
  using ConfigCheckFor = std::function<Tuner::ConfigCheck(const Task& task)>;
  // The configs a task's tuner proposes first (Tuner::SetFirstConfigs),
  // unless measured already: local mode passes the records shipped for the
  // task (tuner_core/pretuned, a warm start) and its default config
  // (toolchain/default_config.h), so the records of a task are never
  // worse than what an untuned compile gets. A selective dependent measures
  // its first configs at the start, before its representative's top-k.
  using FirstConfigFor = std::function<std::vector<Config>(const Task& task)>;

  // What the driver knows that the job spec does not: how each task's tuner
  // is set up beyond spec (the tuner, its seed, plan_size, given configs).
  struct TunerSetup {
    // Applied to every task's tuner but the given tuner; may be empty.
    ConfigCheckFor check_for;
    // Applied to every task's tuner but the given tuner; may be empty.
    FirstConfigFor first_for;
    // xgb*: records of other shapes (transfer learning, XgbTuner::Create),
    // given to every task's model; each uses those of its own template.
    std::vector<Record> history;
    // xgb ("reg"): each task's model starts from its template's prior
    // (TunerOptions::prior_for); may be empty.
    PriorLookup prior_for;
  };

  // InvalidArgument when a task, the tuner, the task policy or the
  // selective option cannot be made. `clock` (not null) must outlive the
  // runner; it times the progress line.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<JobRunner>> Create(
      const proto::JobAssignment& assignment, ClockInterface* clock,
      const TunerSetup& setup = TunerSetup());

  // What the fleet's tuner process passes as `first_for`: the records shipped
  // for spec.pretuned_family(), kPretunedConfigsPerTask per task
  // (PretunedRecords::ConfigsFor); null when the family is empty or has no
  // records. The errors of PretunedRecords::Shipped.
  [[nodiscard]] static absl::StatusOr<FirstConfigFor> ShippedFirstConfigs(
      const proto::JobSpec& spec);
  // What it passes as `prior_for`: the cost-model priors shipped for
  // spec.pretuned_family() (tuner_core/pretuned/cost_model_prior.h); null
  // when the family is empty or has none, or the job's tuner takes no prior
  // (TunerUsesPrior: nothing is loaded for it). The errors of
  // CostModelPriors::Shipped.
  [[nodiscard]] static absl::StatusOr<PriorLookup> ShippedPriors(const proto::JobSpec& spec);
  // The tuners' view of `priors` (it keeps them alive); null when there is
  // none (a null or empty set).
  static PriorLookup PriorsLookup(std::shared_ptr<const CostModelPriors> priors);
  ~JobRunner();

  // New configs to propose now: enough to fill the window, never beyond the
  // job's n_trial or a task's budget, never a config proposed before.
  // `finished` is set once (every task is done: budget spent, early stopped
  // or space exhausted), and from then on nothing more is proposed. Empty
  // when there is nothing to send.
  proto::ProposeTrials NextProposals();
  // The tracker's answer to the oldest proposal not yet answered (it
  // answers every proposal that had configs or `finished`, in order): the
  // refused configs leave the window and their tasks' counts.
  void OnAccepted(const proto::TrialsAccepted& accepted);
  // A trial of this job finished.
  void OnTrialUpdate(const proto::TrialUpdate& update);

  const std::string& job_id() const { return job_id_; }
  int64_t done() const { return done_; }
  int64_t in_flight() const { return in_flight_; }
  int num_tasks() const { return static_cast<int>(tasks_.size()); }
  // Task `i` of the job, as the runner made it from its spec.
  const Task& task(int i) const { return *tasks_[i].task; }
  // Task `i`'s search strategy (its counts; an XgbTuner's model timings).
  const Tuner& tuner(int i) const { return *tasks_[i].tuner; }
  // The best GFLOPS of a one-task job (of task 0 otherwise).
  double best_gflops() const;
  // Sum over tasks of weight x best cost, over tasks with a success.
  double EstimatedLatency() const;
  // The best mean cost of `task` so far; 0 when none of its trials worked.
  double best_cost_s(int task) const { return tasks_[task].best.cost_s(); }
  // Whether `task` is tuned from the start (false: a selective dependent,
  // which waits for its representative's top-k).
  bool scheduled(int task) const { return !selective_ || tasks_[task].depends_on == task; }
  // The AutoTVM progress line of this job (model jobs: estimated latency).
  std::string Progress() const;

 private:
  struct TaskRun {
    std::unique_ptr<Task> task;
    std::unique_ptr<Tuner> tuner;  // points into `task`: declared after it
    double weight = 1;
    // In scheduler_; -1 for a selective dependent without follow-up trials
    // (held in the scheduler until seeded with them).
    int scheduler_index = -1;
    int depends_on = -1;  // selective: the representative it starts from
    bool seeded = false;  // selective dependent: its configs were queued
    int64_t known = 0;    // proposed and not refused
    int64_t in_flight = 0;
    int64_t done = 0;
    BestSoFar best;
    std::vector<std::pair<double, Config>> successes;  // (mean cost, config)
    // Schedule sharing: (source task, source config index) already offered.
    std::set<std::pair<int, int64_t>> shared;
    // Transfer: its results as records (what it offers), and the tasks
    // whose records it takes.
    std::vector<Record> records;
    std::vector<int> learns_from;
  };

  JobRunner(std::string job_id, proto::JobSpec spec) : job_id_(std::move(job_id)), spec_(spec) {}

  [[nodiscard]] absl::Status Plan(const std::vector<const proto::KnownTrial*>& known);
  // Counts a finished trial of `task`: tuner, best, scheduler, seeds.
  void Learn(int task, const std::string& config_json, const proto::TrialResult& result);
  // Transfer: picks each task's sources (Plan).
  void PlanTransfer();
  // Transfer: hands `task`'s records to the tasks that learn from it.
  void OfferRecords(int task);
  // Selective: queue the configs of every dependent of `representative`
  // once it is done.
  void SeedDependents(int representative);
  // After anything that may end `task`'s search: marks it exhausted in the
  // scheduler when its tuner has nothing left, and (selective) seeds its
  // dependents once it is done with nothing in flight. True when it queued
  // seeds.
  bool Settle(int task);
  // One pass of NextProposals: seeds, then the scheduler's picks. True when
  // another pass may find configs this one did not (a pick found its task
  // exhausted, or seeds are waiting).
  bool ProposeRound(proto::ProposeTrials& p);
  // Schedule sharing: the next schedule `task` should take from another task
  // of its template (marked visited), or nothing.
  std::optional<Config> SharedSchedule(int task);
  // Adds `config` of `task` to `p` and counts it in flight.
  void Propose(proto::ProposeTrials& p, int task, const Config& config);
  // Every task is done or will be once its trials in flight report: the
  // tracker may end the job then (ProposeTrials.finished).
  bool NothingMoreToPropose() const;
  // spec.time_budget_s has passed since the job's first trial began.
  bool OutOfTime() const;
  static std::vector<int> TasksOf(const proto::ProposeTrials& p);

  const std::string job_id_;
  const proto::JobSpec spec_;
  std::vector<TaskRun> tasks_;
  std::vector<int> scheduled_tasks_;  // scheduler index -> task
  std::unique_ptr<TaskScheduler> scheduler_;
  std::optional<TopK> selective_;
  int64_t followup_ = 0;                      // spec.selective_followup_trials
  bool share_schedules_ = false;              // spec.share_schedules
  bool transfer_ = false;                     // spec.transfer_between_tasks
  std::deque<std::pair<int, Config>> seeds_;  // selective: (task, config) to propose
  // The tasks of each proposal sent and not yet answered, oldest first.
  std::deque<std::vector<int>> awaiting_answer_;
  int32_t window_ = 8;
  int64_t known_ = 0;      // trials the tracker holds or we proposed
  int64_t in_flight_ = 0;  // proposed, not yet done
  int64_t done_ = 0;
  double last_gflops_ = 0;
  bool finished_sent_ = false;
  ClockInterface* clock_ = nullptr;
  // clock_'s seconds when the job's search began: when this runner was
  // created, or earlier by as long as the known trials say the job has run
  // (a takeover goes on with the time that is left).
  double started_ = 0;
};

}  // namespace tunefleet

#endif  // TUNEFLEET_JOB_DRIVER_JOB_RUNNER_H_
