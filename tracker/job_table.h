// JobTable: the tracker's jobs in memory: each job's stored row, its trials
// and their states, its queues, counters and best result, and who watches it
// (WatchJob). Plus the two pure functions over a job that the API needs:
// CompleteJobSpec (defaults and range checks of a submitted spec) and
// StatusOf (a job as JobStatus).
//
// The table holds data and subscriptions only; the parts of the scheduler
// change it: TrialLifecycle (trial and job transitions), Dispatcher (queues
// and leases out), LeaseKeeper (leases back). Not thread-safe: the Scheduler
// facade calls everything under its one mutex.
//
// A trial's states (trial_lifecycle.h): to_build -> building (leased to a builder)
// -> to_measure (artifact held here) -> measuring (leased to an agent) ->
// done. Two states wait for the store: a result the store refused
// (kResultUnstored) and a requeue whose attempt count the store refused
// (kRequeueUnstored); both are retried every tick and acknowledged to
// nobody until the write succeeds.
#ifndef TUNEFLEET_TRACKER_JOB_TABLE_H_
#define TUNEFLEET_TRACKER_JOB_TABLE_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/fleet.pb.h"
#include "proto_convert/job_state.h"
#include "tracker/scheduler_options.h"
#include "tracker/store/store.h"
#include "tuner_core/measure/validation.h"
#include "tuner_core/records/best_so_far.h"
#include "tuner_core/templates/task.h"

namespace tunefleet {

enum class Stage { kBuild, kMeasure };
const char* StageName(Stage stage);  // "build", "measure"

enum class TrialState {
  kToBuild,
  kBuilding,
  kToMeasure,
  kMeasuring,
  kResultUnstored,   // result in hand, not yet in the store
  kRequeueUnstored,  // lost its worker; requeued once the store has its attempts
  kDone,
};

struct Trial {
  int64_t id = 0;
  int32_t task_index = 0;  // in the job's tasks
  // A validation measurement (tracker/validation.h) of search trial
  // `validates`, pass `validation_pass`; -1 for a search trial.
  int64_t validates = -1;
  int32_t validation_pass = 0;
  // A search trial among its task's top-k once every validation of the job
  // is done: its passes (written into its record line).
  std::optional<Validation> validation;
  std::string config_json;
  int64_t config_index = 0;
  TrialState state = TrialState::kToBuild;
  int32_t attempts = 0;
  std::string lease_id;  // while building or measuring
  double queued_at = 0;  // steady time it entered its current queue
  // Between build and measure.
  std::shared_ptr<const std::string> shared_object;
  std::string entry_name;
  std::string artifact_hash;
  // The builder's signature of the artifact and its public key (empty when
  // the fleet does not sign), forwarded to the agent with the bytes.
  std::string artifact_signature;
  std::string artifact_signer;
  double build_seconds = 0;
  std::string builder;
  // The agent holding its measure lease (while kMeasuring; the result names
  // the agent once done).
  std::string measuring_agent;
  // The target it was built for: the task's, with "-mcpu=native" resolved
  // to the CPU of the key's agents. Empty until a build is dispatched.
  std::string target;
  Stage requeue_stage = Stage::kBuild;  // kRequeueUnstored: the stage it lost
  bool done = false;                    // the store has its result
  proto::TrialResult result;            // once done (or kResultUnstored)
};

// A job's event subscription (WatchJob). Called with the scheduler mutex
// held: must only queue the event. Returning false unsubscribes.
using JobWatcher = std::function<bool(const proto::JobEvent& event)>;

// One task of a job (spec.tasks[i]) and its progress.
struct JobTask {
  std::unique_ptr<Task> task;  // for configs, records and FLOPs
  double weight = 1;           // layers of the model it serves
  std::string name;
  int64_t trials = 0;  // created (proposed and accepted)
  int64_t done = 0;
  int64_t failed = 0;
  BestSoFar best;  // the search's best measurement
  std::string best_config_json;
  // Once the job's validation is done: the search trial whose validated
  // cost is the task's lowest (-1: none validated) and its validation.
  int64_t validated_trial = -1;
  Validation validated;
  // Whether the agents of the key that measured the winner's passes agree
  // (ConfirmationOf in tracker/validation.h): its Describe(), and whether
  // they disagree beyond the noise.
  std::string confirmation;
  bool agents_disagree = false;
};

struct Job {
  StoredJob stored;
  // One per spec.tasks entry; empty when a task cannot be loaded (the job
  // is failed at Resume).
  std::vector<JobTask> tasks;
  std::map<int64_t, Trial> trials;
  std::deque<int64_t> to_build;
  std::deque<int64_t> to_measure;
  int64_t building = 0;
  int64_t measuring = 0;
  int64_t done = 0;  // search trials done
  int64_t failed = 0;
  // Validation measurements (tracker/validation.h): created, and done.
  // Validation starts once the search is over; `validated` once the
  // results are applied to the search trials and stored.
  int64_t validations = 0;
  int64_t validations_done = 0;
  bool validated = false;
  std::string tuner_worker;  // worker id of the tuner holding it
  double build_pass = 0;     // stride scheduling
  double measure_pass = 0;
  bool search_finished = false;
  std::string finish_reason;
  std::map<int64_t, JobWatcher> watchers;
  // Trials waiting for a store write to be retried (kResultUnstored,
  // kRequeueUnstored), and why the last write of this job failed ("" when
  // none is waiting): StatusOf reports it as the job's message.
  std::set<int64_t> unstored_trials;
  std::string store_error;
  // Steady time since when no agent of its key is connected; 0 while one is
  // (spec.queue_timeout_s).
  double no_agent_since = 0;

  bool finished() const { return IsFinalJobState(stored.state); }
  bool loaded() const { return !tasks.empty(); }
  // Search trials proposed and not done (validation measurements apart).
  int64_t in_flight() const { return search_trials() - done; }
  int64_t search_trials() const { return static_cast<int64_t>(trials.size()) - validations; }
  double stride() const { return 1.0 / std::max(1, stored.spec.priority()); }
};

class JobTable {
 public:
  // The sequence number of the next submitted job.
  int64_t TakeSequence() { return next_sequence_++; }
  // Adds `job` after the others (its sequence is noted so TakeSequence never
  // repeats a loaded one).
  Job& Add(std::unique_ptr<Job> job);
  Job* Find(const std::string& job_id);

  // Jobs by id (the order dispatch breaks ties in) and in submission order.
  const std::map<std::string, std::unique_ptr<Job>>& by_id() const { return jobs_; }
  const std::vector<std::string>& submission_order() const { return order_; }

  // Subscribes `watcher` to `job`: it first receives `first`; if it returns
  // true and the job is not finished it stays subscribed. Returns the
  // subscription id.
  int64_t Watch(Job& job, JobWatcher watcher, const proto::JobEvent& first);
  void Unwatch(int64_t subscription);
  // Sends `event` to every watcher of `job`, dropping those that return false.
  void Notify(Job& job, const proto::JobEvent& event);
  // Drops every subscription of `job` (it has ended).
  void EndWatches(Job& job);

 private:
  std::map<std::string, std::unique_ptr<Job>> jobs_;
  std::vector<std::string> order_;
  int64_t next_sequence_ = 1;
  std::map<int64_t, std::string> watch_jobs_;  // subscription -> job id
  int64_t next_watch_ = 1;
};

// The highest priority a job may ask for: a job's share of its key's
// agents is its priority over the sum of those waiting, so a cap keeps one
// job from taking them all.
inline constexpr int kMaxJobPriority = 100;
// Caps on what one job may ask of the fleet: attempts per trial (each a
// build and a measurement), a build's timeout, trials in flight.
inline constexpr int kMaxJobAttempts = 20;
inline constexpr double kMaxBuildTimeoutS = 3600;
inline constexpr int kMaxJobWindow = 512;
// The largest JobSpec.plan_size: the xgb* tuners rank this many candidates
// per refit, so it bounds their work per step.
inline constexpr int32_t kMaxPlanSize = 4096;
// The longest JobSpec.pretuned_family (e.g. "x86_64-avx512").
inline constexpr size_t kMaxPretunedFamilyBytes = 64;

// `spec` with defaults filled in (priority 1, the options' max_attempts and
// build timeout, the random tuner, AutoTVM's measure options, the gradient
// task policy) and in canonical form (a one-task `task` moved into `tasks`),
// or InvalidArgument naming the field out of range. Does not load the tasks.
[[nodiscard]] absl::StatusOr<proto::JobSpec> CompleteJobSpec(proto::JobSpec spec,
                                                             const SchedulerOptions& options);

// The tasks of a completed spec, loaded (TaskFromSpec), with their weights
// and names; InvalidArgument naming the task that does not load or whose
// space is empty.
[[nodiscard]] absl::StatusOr<std::vector<JobTask>> LoadJobTasks(const proto::JobSpec& spec);

// `job` as the job API reports it; `tuner_name` is the name of the tuner
// holding it ("" for none).
proto::JobStatus StatusOf(const Job& job, const std::string& tuner_name);

}  // namespace tunefleet

#endif  // TUNEFLEET_TRACKER_JOB_TABLE_H_
