#include "local/local_job.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "job_driver/job_runner.h"
#include "job_driver/trial_executor.h"
#include "local/build_ahead.h"
#include "local/validate_winners.h"
#include "local/validation_log.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/run_request.h"
#include "proto_convert/task_spec.h"
#include "toolchain/codegen/target.h"
#include "toolchain/default_config.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/records/task_record.h"
#include "tuner_core/templates/register_fit.h"

namespace tunefleet {

namespace {

// Resume: the log's records of `spec`'s tasks (same task, target and
// arguments; one per config, the first) as done known trials, numbered from
// 0, with their results in `results_per_task`. The timestamps are cleared:
// they replay in the log's order, and the time budget counts from now.
[[nodiscard]] absl::Status AddLoggedTrials(
    const proto::JobSpec& spec, const std::string& log, proto::JobAssignment& assignment,
    std::vector<std::vector<TrialResult>>& results_per_task) {
  absl::StatusOr<ReadReport> earlier = ReadRecords(log);
  if (!earlier.ok()) {
    if (earlier.status().code() == absl::StatusCode::kNotFound) return absl::OkStatus();
    return earlier.status();
  }
  std::vector<std::unique_ptr<Task>> tasks;
  for (const proto::JobTask& t : spec.tasks()) {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, TaskFromSpec(t.task()));
    tasks.push_back(std::move(task));
  }
  std::set<std::pair<size_t, int64_t>> seen;
  for (const Record& r : earlier->records) {
    for (size_t t = 0; t < tasks.size(); ++t) {
      const Task& task = *tasks[t];
      if (!IsRecordOf(r, task)) continue;
      absl::StatusOr<Config> config = task.space().FromJson(r.config);
      if (!config.ok()) break;  // a record of an older space: measured again
      if (!seen.emplace(t, config->index()).second) break;
      proto::KnownTrial* known = assignment.add_trials();
      known->set_trial_id(assignment.trials_size() - 1);
      known->set_task_index(static_cast<int32_t>(t));
      known->set_config_json(config->ToJson().dump());
      known->set_config_index(config->index());
      known->set_done(true);
      *known->mutable_result() = ToTrialResult(r.result);
      known->mutable_result()->set_timestamp(0);
      results_per_task[t].push_back(TrialResult{*std::move(config), r.result});
      break;
    }
  }
  return absl::OkStatus();
}

}  // namespace

[[nodiscard]] absl::StatusOr<std::shared_ptr<const CostModelPriors>> LoadCostModelPriors(
    const std::string& family, const std::string& file) {
  if (file == "none") return std::make_shared<const CostModelPriors>();
  if (!file.empty()) {
    TF_ASSIGN_OR_RETURN(CostModelPriors priors, CostModelPriors::ReadFile(file));
    return std::make_shared<const CostModelPriors>(std::move(priors));
  }
  if (!family.empty()) return CostModelPriors::Shipped(family);
  return std::make_shared<const CostModelPriors>();
}

[[nodiscard]] absl::StatusOr<std::shared_ptr<const PretunedRecords>> LoadPretunedRecords(
    const std::string& family, const std::string& file) {
  if (!file.empty()) {
    TF_ASSIGN_OR_RETURN(PretunedRecords records, PretunedRecords::ReadFile(file));
    return std::make_shared<const PretunedRecords>(std::move(records));
  }
  if (!family.empty()) return PretunedRecords::Shipped(family);
  return std::make_shared<const PretunedRecords>();
}

std::vector<Config> FirstConfigs(const Task& task, const TargetSpec& target,
                                 const PretunedRecords& pretuned) {
  std::vector<Config> first = pretuned.ConfigsFor(task, kPretunedConfigsPerTask);
  absl::StatusOr<Config> fallback = DefaultConfig(task, TargetVectorLanes(target));
  if (fallback.ok() && std::none_of(first.begin(), first.end(), [&](const Config& c) {
        return c.index() == fallback->index();
      })) {
    first.push_back(*std::move(fallback));
  }
  return first;
}

namespace {

// What the validation of one task found, into its outcome; per-candidate
// lines on `progress` when `detail`.
void ReportValidation(const WinnerValidation& winners, const std::string& label, int task,
                      bool detail, LocalTaskOutcome& outcome, std::ostream& progress) {
  outcome.validated_configs = static_cast<int>(winners.candidates.size());
  const double flops = outcome.flops;
  if (detail) {
    for (const ValidatedCandidate& c : winners.candidates) {
      progress << absl::StrFormat("  config %d: search %.2f GFLOPS, ", c.config.index(),
                                  flops / c.search.MeanCost() / 1e9);
      if (c.validation.ok()) {
        progress << absl::StrFormat("validated %.2f GFLOPS (%s)",
                                    flops / c.validation.cost_s() / 1e9,
                                    DescribeValidation(c.validation));
      } else {
        progress << DescribeValidation(c.validation);
      }
      if (!c.last_error.empty()) progress << "; last error: " << c.last_error;
      progress << "\n";
    }
  }
  progress << absl::StrFormat("[%s] task %d: %d configs validated; best ", label, task,
                              winners.candidates.size());
  if (!winners.best.has_value()) {
    progress << absl::StrFormat("%.4f ms search figure, not validated: no pass succeeded\n",
                                outcome.search_best_cost_s * 1e3);
    return;
  }
  const ValidatedCandidate& best = winners.candidates[*winners.best];
  outcome.best_cost_s = best.validation.cost_s();
  outcome.best_config = best.config.ToJson();
  outcome.best_search_cost_s = best.search.MeanCost();
  outcome.validated = true;
  outcome.validation_passes = static_cast<int>(best.validation.pass_costs.size());
  outcome.validation_spread = best.validation.rel_spread();
  progress << absl::StrFormat("%.4f ms validated (%s; search figure %.4f ms)\n",
                              best.validation.cost_s() * 1e3, DescribeValidation(best.validation),
                              best.search.MeanCost() * 1e3);
}

// The search's best of `results` into `outcome` (reported best too, until
// a validation says otherwise).
void ReportSearch(const std::vector<TrialResult>& results, LocalTaskOutcome& outcome) {
  const TrialResult* best = nullptr;
  for (const TrialResult& r : results) {
    if (r.result.ok() && (best == nullptr || r.result.MeanCost() < best->result.MeanCost())) {
      best = &r;
    }
  }
  if (best == nullptr) return;
  outcome.search_best_cost_s = best->result.MeanCost();
  outcome.search_best_config = best->config.ToJson();
  outcome.best_cost_s = outcome.search_best_cost_s;
  outcome.best_config = outcome.search_best_config;
  outcome.best_search_cost_s = outcome.search_best_cost_s;
}

// The cost model's figures of an xgb* tuner into `outcome`.
void ReportModel(const Tuner& tuner, LocalTaskOutcome& outcome) {
  const auto* model = dynamic_cast<const XgbTuner*>(&tuner);
  if (model == nullptr) return;
  outcome.model = model->model_timings();
  outcome.history_records = model->history_records();
  outcome.history_shapes = model->history_shapes();
  if (!model->model_status().ok())
    outcome.model_warning = std::string(model->model_status().message());
}

// Local mode's fleet: the configs the runner proposes are built in this
// process and measured one by one in a runner child, each result appended
// to the log before the runner hears of it. One runner child for the whole
// search: a measurer is made for a task when its configs come and kept
// while the next batch is of the same task; the next task's measurer takes
// over its child, which keeps the workloads it prepared (inputs and
// reference outputs), so going back to a task costs no new child and no
// second reference computation.
//
// Without free CPUs (`free_cpus` empty: the measurement's threads take them
// all) Execute builds and measures each proposal before it returns. With
// them, Execute only queues the proposed trials, and RunNextBatch measures
// them a batch at a time while the batch after it is built on the free CPUs
// (build_ahead.h); the runner's window then holds two batches.
class LocalFleet final : public TrialExecutor {
 public:
  LocalFleet(std::vector<const Task*> tasks, const LocalMeasurerOptions& options,
             std::vector<int> free_cpus, int batch, RecordWriter* writer, int64_t next_trial_id,
             LocalJobSummary& summary, std::vector<std::vector<TrialResult>>& results_per_task,
             std::ostream& progress)
      : tasks_(std::move(tasks)),
        options_(options),
        free_cpus_(std::move(free_cpus)),
        batch_(static_cast<size_t>(std::max(1, batch))),
        writer_(writer),
        next_trial_id_(next_trial_id),
        summary_(summary),
        results_per_task_(results_per_task),
        progress_(progress) {
    for (const Task* task : tasks_) targets_.push_back(ParseTarget(task->target()));
  }

  // Whether Execute only queues trials for RunNextBatch.
  bool builds_ahead() const { return !free_cpus_.empty(); }

  [[nodiscard]] absl::StatusOr<bool> Execute(JobRunner& runner,
                                             const proto::ProposeTrials& proposals) override {
    proto::TrialsAccepted accepted;  // everything: nobody else proposes here
    accepted.set_job_id(proposals.job_id());
    for (int i = 0; i < proposals.configs_size(); ++i) accepted.add_trial_ids(next_trial_id_++);
    runner.OnAccepted(accepted);
    if (proposals.configs_size() == 0) return true;  // `finished`
    job_id_ = proposals.job_id();
    for (const proto::ProposedConfig& pc : proposals.configs()) {
      TF_ASSIGN_OR_RETURN(Config config,
                          tasks_[pc.task_index()]->space().FromJsonString(pc.config_json()));
      queued_.push_back({pc.task_index(), std::move(config)});
    }
    if (builds_ahead()) return false;  // RunNextBatch answers
    std::vector<QueuedTrial> all(std::make_move_iterator(queued_.begin()),
                                 std::make_move_iterator(queued_.end()));
    queued_.clear();
    TF_RETURN_IF_ERROR(MeasureBatch(runner, all, /*builds=*/nullptr));
    return true;
  }

  // Measures the next batch of queued trials (built ahead when it could
  // be), after starting the builds of the batch that follows it on the
  // free CPUs. False when nothing was queued.
  [[nodiscard]] absl::StatusOr<bool> RunNextBatch(JobRunner& runner) {
    if (queued_.empty()) return false;
    std::unique_ptr<BuildAhead> current = std::move(ahead_);
    // What was built ahead is the queue's front: trials only join at the back.
    const size_t n = current != nullptr ? ahead_count_ : std::min(batch_, queued_.size());
    std::vector<QueuedTrial> batch(std::make_move_iterator(queued_.begin()),
                                   std::make_move_iterator(queued_.begin() + n));
    queued_.erase(queued_.begin(), queued_.begin() + n);
    if (current == nullptr) current = StartBuilds(batch);
    Stopwatch wait(MeasurerClock(options_));
    std::vector<BuildResult> builds = current->Take();
    const double waited = wait.ElapsedSeconds();
    build_wall_seconds_ += waited;
    build_ahead_seconds_ += std::max(0.0, current->wall_seconds() - waited);
    current.reset();
    if (!queued_.empty()) {
      ahead_count_ = std::min(batch_, queued_.size());
      ahead_ =
          StartBuilds(std::vector<QueuedTrial>(queued_.begin(), queued_.begin() + ahead_count_));
    }
    TF_RETURN_IF_ERROR(MeasureBatch(runner, batch, &builds));
    return true;
  }

  // Task `t`'s measurer: the current one, or a new one that takes over the
  // runner child (LocalMeasurerOptions::share_runner_child).
  [[nodiscard]] absl::StatusOr<LocalMeasurer*> MeasurerFor(int t) {
    if (measurer_task_ == t) return measurer_.get();
    std::unique_ptr<Runner> child;
    if (measurer_ != nullptr) {
      summary_.timings.Add(measurer_->timings());
      if (options_.share_runner_child) child = measurer_->ReleaseRunner();
    }
    measurer_.reset();
    measurer_task_ = -1;
    TF_ASSIGN_OR_RETURN(measurer_, LocalMeasurer::Create(*tasks_[t], options_, std::move(child)));
    measurer_task_ = t;
    return measurer_.get();
  }

  // The last measurer's timings into the summary; its runner child ends.
  void Finish() {
    if (measurer_ != nullptr) summary_.timings.Add(measurer_->timings());
    summary_.timings.build_wall_seconds += build_wall_seconds_;
    summary_.timings.build_ahead_seconds += build_ahead_seconds_;
    build_wall_seconds_ = build_ahead_seconds_ = 0;
    measurer_.reset();
    measurer_task_ = -1;
  }

 private:
  struct QueuedTrial {
    int task = 0;
    Config config;
  };

  // Starts building `trials` on the free CPUs (a task whose target does not
  // parse fails to build; its measurer reports why).
  std::unique_ptr<BuildAhead> StartBuilds(const std::vector<QueuedTrial>& trials) {
    std::vector<BuildJob> jobs;
    for (const QueuedTrial& q : trials) {
      const absl::StatusOr<TargetSpec>& target = targets_[q.task];
      jobs.push_back({tasks_[q.task], target.ok() ? &*target : nullptr, q.config});
    }
    return std::make_unique<BuildAhead>(std::move(jobs), options_.build, free_cpus_,
                                        MeasurerClock(options_));
  }

  // Measures `batch`, task by task, with `builds` (one per trial, in order)
  // or, when null, building each task's configs first; logs each result and
  // hands it to the runner.
  [[nodiscard]] absl::Status MeasureBatch(JobRunner& runner, const std::vector<QueuedTrial>& batch,
                                          std::vector<BuildResult>* builds) {
    std::map<int, std::vector<size_t>> by_task;
    for (size_t i = 0; i < batch.size(); ++i) by_task[batch[i].task].push_back(i);
    for (const auto& [t, indices] : by_task) {
      TF_ASSIGN_OR_RETURN(LocalMeasurer * measurer, MeasurerFor(t));
      const double best = runner.best_cost_s(t);
      measurer->set_reject_above_s(
          options_.reject_slower_than > 0 && best > 0 ? options_.reject_slower_than * best : 0);
      std::vector<Config> configs;
      std::vector<BuildResult> built;
      for (size_t i : indices) {
        configs.push_back(batch[i].config);
        if (builds != nullptr) built.push_back(std::move((*builds)[i]));
      }
      const std::vector<MeasureResult> results =
          builds != nullptr ? measurer->MeasureBuilt(configs, built) : measurer->Measure(configs);
      for (size_t i = 0; i < configs.size(); ++i) {
        if (writer_ != nullptr) {
          TF_RETURN_IF_ERROR(writer_->Append(RecordOf(*tasks_[t], configs[i], results[i])));
        }
        proto::TrialUpdate update;
        update.set_job_id(job_id_);
        update.set_task_index(t);
        update.set_config_json(configs[i].ToJson().dump());
        update.set_config_index(configs[i].index());
        *update.mutable_result() = ToTrialResult(results[i]);
        runner.OnTrialUpdate(update);
        ++summary_.trials;
        ++summary_.tasks[t].trials;
        results_per_task_[t].push_back(TrialResult{configs[i], results[i]});
      }
    }
    progress_ << runner.Progress() << "\n";
    return absl::OkStatus();
  }

  const std::vector<const Task*> tasks_;
  const LocalMeasurerOptions& options_;
  const std::vector<int> free_cpus_;
  const size_t batch_;
  std::vector<absl::StatusOr<TargetSpec>> targets_;  // each task's
  std::string job_id_;
  std::deque<QueuedTrial> queued_;     // accepted, not yet measured
  std::unique_ptr<BuildAhead> ahead_;  // building queued_'s first ahead_count_
  size_t ahead_count_ = 0;
  double build_wall_seconds_ = 0;   // waited for builds
  double build_ahead_seconds_ = 0;  // builds beside a measurement
  RecordWriter* const writer_;      // null: no log
  int64_t next_trial_id_;
  LocalJobSummary& summary_;
  std::vector<std::vector<TrialResult>>& results_per_task_;
  std::ostream& progress_;
  int measurer_task_ = -1;
  std::unique_ptr<LocalMeasurer> measurer_;
};

}  // namespace

[[nodiscard]] absl::StatusOr<LocalJobSummary> RunLocalJob(const proto::JobSpec& spec_in,
                                                          const LocalMeasurerOptions& host,
                                                          const std::string& log,
                                                          std::ostream& progress,
                                                          const LocalJobSetup& setup) {
  // The measurers' clock.
  ClockInterface* const clock = &MeasurerClock(host);
  const double start = clock->NowSeconds();
  // The job's side of the measurer options comes from its spec.
  LocalMeasurerOptions options = host;
  options.measure = ResolveMeasureOptions(spec_in.measure());
  options.validation.top_k =
      spec_in.has_validate_top_k() ? spec_in.validate_top_k() : kDefaultValidateTopK;
  options.validation.passes =
      spec_in.has_validation_passes() ? spec_in.validation_passes() : kDefaultValidationPasses;
  TF_RETURN_IF_ERROR(options.validation.Validate());
  TF_RETURN_IF_ERROR(options.measure.Validate());
  if (!std::isfinite(options.reject_slower_than) ||
      (options.reject_slower_than != 0 && options.reject_slower_than < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--reject_slower_than must be 0 (off) or at least 1 (times the task's best), got ",
        options.reject_slower_than));
  }
  proto::JobSpec spec = spec_in;
  TF_RETURN_IF_ERROR(CanonicalizeJobTasks(spec));
  proto::JobAssignment assignment;
  assignment.set_job_id(setup.label);
  *assignment.mutable_spec() = spec;
  // One build batch in flight, built in parallel, then measured; two
  // where the next is built beside the measurement.
  const int batch = spec.window() > 0 ? spec.window() : 8;
  std::vector<int> free_cpus =
      options.build_ahead ? FreeCpus(options.runner.num_threads) : std::vector<int>();
  assignment.set_suggested_window(free_cpus.empty() ? batch : 2 * batch);
  // Every result per task, resumed ones first: the validation's candidates.
  std::vector<std::vector<TrialResult>> results_per_task(spec.tasks_size());
  if (setup.resume && !log.empty()) {
    TF_RETURN_IF_ERROR(AddLoggedTrials(spec, log, assignment, results_per_task));
  }
  const PretunedRecords cold;
  const PretunedRecords& pretuned = setup.pretuned != nullptr ? *setup.pretuned : cold;
  // Each task's tuner skips what its target cannot build.
  auto check_for = [](const Task& task) -> Tuner::ConfigCheck {
    absl::StatusOr<TargetSpec> target = ParseTarget(task.target());
    if (!target.ok()) return nullptr;  // the builds report the target's error
    return RegisterTileCheck(task, *std::move(target));
  };
  // Each task measures its pretuned configs and its default config first
  // (what an untuned compile would run), so its records never lose to it.
  auto first_for = [&pretuned](const Task& task) -> std::vector<Config> {
    absl::StatusOr<TargetSpec> target = ParseTarget(task.target());
    if (!target.ok()) return {};  // the builds report the target's error
    return FirstConfigs(task, *target, pretuned);
  };
  TF_ASSIGN_OR_RETURN(std::unique_ptr<JobRunner> runner,
                      JobRunner::Create(assignment, clock,
                                        {.check_for = check_for,
                                         .first_for = first_for,
                                         .history = setup.transfer_history,
                                         .prior_for = JobRunner::PriorsLookup(setup.priors)}));
  // The runner's tasks: built and measured as the runner proposes them.
  std::vector<const Task*> tasks;
  for (int t = 0; t < runner->num_tasks(); ++t) tasks.push_back(&runner->task(t));
  std::unique_ptr<RecordWriter> writer;
  if (!log.empty()) {
    TF_ASSIGN_OR_RETURN(writer, RecordWriter::Open(log));
  }

  LocalJobSummary summary;
  summary.tasks.resize(tasks.size());
  for (size_t t = 0; t < tasks.size(); ++t) {
    summary.tasks[t].template_name = tasks[t]->name();
    summary.tasks[t].workload = tasks[t]->workload().Describe();
    summary.tasks[t].flops = tasks[t]->workload().flops();
  }
  for (const proto::KnownTrial& known : assignment.trials()) {
    ++summary.tasks[known.task_index()].resumed;
  }
  LocalFleet fleet(tasks, options, std::move(free_cpus), batch, writer.get(),
                   assignment.trials_size(), summary, results_per_task, progress);
  TF_RETURN_IF_ERROR(Pump(*runner, fleet));
  while (fleet.builds_ahead()) {
    TF_ASSIGN_OR_RETURN(const bool measured, fleet.RunNextBatch(*runner));
    if (!measured) break;
    TF_RETURN_IF_ERROR(Pump(*runner, fleet));
  }
  writer.reset();  // the log may be rewritten with the validations

  const size_t n = tasks.size();
  std::vector<Record> validated_records;
  for (size_t t = 0; t < n; ++t) {
    LocalTaskOutcome& outcome = summary.tasks[t];
    const Tuner& tuner = runner->tuner(static_cast<int>(t));
    outcome.refused_before_measuring = tuner.refused_before_measuring();
    ReportModel(tuner, outcome);
    ReportSearch(results_per_task[t], outcome);
    if (outcome.search_best_cost_s <= 0 || options.validation.top_k == 0) continue;
    TF_ASSIGN_OR_RETURN(LocalMeasurer * measurer, fleet.MeasurerFor(static_cast<int>(t)));
    TF_ASSIGN_OR_RETURN(WinnerValidation winners,
                        ValidateWinners(*measurer, results_per_task[t], options.validation));
    for (Record& r : ValidatedRecords(*tasks[t], winners))
      validated_records.push_back(std::move(r));
    ReportValidation(winners, setup.label, static_cast<int>(t), /*detail=*/n == 1, outcome,
                     progress);
  }
  fleet.Finish();
  if (!log.empty() && !validated_records.empty()) {
    TF_ASSIGN_OR_RETURN(summary.validated_lines, WriteValidationsToLog(log, validated_records));
  }
  for (size_t t = 0; t < n; ++t) {
    if (summary.tasks[t].best_cost_s <= 0) {
      ++summary.untuned_tasks;
      continue;
    }
    // The same weights as JobRunner::EstimatedLatency.
    const double weight = spec.tasks(t).has_weight() ? spec.tasks(t).weight() : 1;
    summary.estimated_latency_s += weight * summary.tasks[t].best_cost_s;
  }
  summary.wall_seconds = clock->NowSeconds() - start;
  return summary;
}

}  // namespace tunefleet
