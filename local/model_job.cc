#include "local/model_job.h"

#include <cmath>
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
#include "local/tune_command.h"
#include "local/validate_winners.h"
#include "local/validation_log.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/task_spec.h"
#include "toolchain/codegen/target.h"
#include "toolchain/default_config.h"
#include "toolchain/register_fit.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/records/task_record.h"

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

[[nodiscard]] absl::StatusOr<LocalModelSummary> RunLocalModelJob(
    const proto::JobSpec& spec_in, const LocalMeasurerOptions& options, const std::string& log,
    std::ostream& progress, const LocalJobSetup& setup) {
  // The measurers' clock.
  ClockInterface* const clock = &MeasurerClock(options);
  const double start = clock->NowSeconds();
  TF_RETURN_IF_ERROR(options.validation.Validate());
  if (!std::isfinite(options.reject_slower_than) ||
      (options.reject_slower_than != 0 && options.reject_slower_than < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--reject_slower_than must be 0 (off) or at least 1 (times the task's best), got ",
        options.reject_slower_than));
  }
  proto::JobSpec spec = spec_in;
  TF_RETURN_IF_ERROR(CanonicalizeJobTasks(spec));
  proto::JobAssignment assignment;
  assignment.set_job_id("local");
  *assignment.mutable_spec() = spec;
  // One build batch in flight, as local `tune` builds a batch then measures it.
  assignment.set_suggested_window(spec.window() > 0 ? spec.window() : 8);
  // Every result per task, resumed ones first: the validation's candidates.
  std::vector<std::vector<TrialResult>> results_per_task(spec.tasks_size());
  if (setup.resume && !log.empty()) {
    TF_RETURN_IF_ERROR(AddLoggedTrials(spec, log, assignment, results_per_task));
  }
  const PretunedRecords cold;
  const PretunedRecords& pretuned = setup.pretuned != nullptr ? *setup.pretuned : cold;
  // Each task's tuner skips what its target cannot build, as local tune does.
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
  TF_ASSIGN_OR_RETURN(
      std::unique_ptr<JobRunner> runner,
      JobRunner::Create(
          assignment, clock,
          {.check_for = check_for, .first_for = first_for, .history = setup.transfer_history}));
  // The runner's tasks: built and measured as the runner proposes them.
  std::vector<const Task*> tasks;
  for (int t = 0; t < runner->num_tasks(); ++t) tasks.push_back(&runner->task(t));
  std::unique_ptr<RecordWriter> writer;
  if (!log.empty()) {
    TF_ASSIGN_OR_RETURN(writer, RecordWriter::Open(log));
  }

  LocalModelSummary summary;
  summary.trials_per_task.assign(tasks.size(), 0);
  summary.resumed_per_task.assign(tasks.size(), 0);
  for (const proto::KnownTrial& known : assignment.trials()) {
    ++summary.resumed_per_task[known.task_index()];
  }
  // One runner child for the whole search: a measurer is made for a task
  // when its configs come and kept while the next batch is of the same task;
  // the next task's measurer takes over its child, which keeps the
  // workloads it prepared (inputs and reference outputs), so going back to
  // a task costs no new child and no second reference computation.
  int measurer_task = -1;
  std::unique_ptr<LocalMeasurer> measurer;
  auto measure_task = [&](int t) -> absl::Status {
    if (measurer_task == t) return absl::OkStatus();
    std::unique_ptr<Runner> child;
    if (measurer != nullptr) {
      summary.timings.Add(measurer->timings());
      if (options.share_runner_child) child = measurer->ReleaseRunner();
    }
    measurer.reset();
    TF_ASSIGN_OR_RETURN(measurer, LocalMeasurer::Create(*tasks[t], options, std::move(child)));
    measurer_task = t;
    return absl::OkStatus();
  };
  int64_t next_trial_id = assignment.trials_size();
  while (true) {
    proto::ProposeTrials proposals = runner->NextProposals();
    if (proposals.configs_size() > 0 || proposals.finished()) {
      proto::TrialsAccepted accepted;  // everything: nobody else proposes here
      accepted.set_job_id("local");
      for (int i = 0; i < proposals.configs_size(); ++i) accepted.add_trial_ids(next_trial_id++);
      runner->OnAccepted(accepted);
    }
    if (proposals.configs_size() == 0) break;  // done, or the window is empty and nothing comes
    std::map<int, std::vector<Config>> by_task;
    for (const proto::ProposedConfig& pc : proposals.configs()) {
      TF_ASSIGN_OR_RETURN(Config config,
                          tasks[pc.task_index()]->space().FromJsonString(pc.config_json()));
      by_task[pc.task_index()].push_back(std::move(config));
    }
    for (const auto& [t, configs] : by_task) {
      TF_RETURN_IF_ERROR(measure_task(t));
      const double best = runner->best_cost_s(t);
      measurer->set_reject_above_s(
          options.reject_slower_than > 0 && best > 0 ? options.reject_slower_than * best : 0);
      const std::vector<MeasureResult> results = measurer->Measure(configs);
      for (size_t i = 0; i < configs.size(); ++i) {
        if (writer) {
          TF_RETURN_IF_ERROR(writer->Append(RecordOf(*tasks[t], configs[i], results[i])));
        }
        proto::TrialUpdate update;
        update.set_job_id("local");
        update.set_task_index(t);
        update.set_config_json(configs[i].ToJson().dump());
        update.set_config_index(configs[i].index());
        *update.mutable_result() = ToTrialResult(results[i]);
        runner->OnTrialUpdate(update);
        ++summary.trials;
        ++summary.trials_per_task[t];
        results_per_task[t].push_back(TrialResult{configs[i], results[i]});
      }
    }
    progress << runner->Progress() << "\n";
  }
  writer.reset();  // the log may be rewritten with the validations

  const size_t n = tasks.size();
  summary.best_cost_s.assign(n, 0);
  summary.search_best_cost_s.assign(n, 0);
  summary.validated.assign(n, false);
  summary.validation_passes.assign(n, 0);
  summary.validation_spread.assign(n, 0);
  std::vector<Record> validated_records;
  for (size_t t = 0; t < n; ++t) {
    summary.search_best_cost_s[t] = runner->best_cost_s(static_cast<int>(t));
    summary.best_cost_s[t] = summary.search_best_cost_s[t];
    if (summary.search_best_cost_s[t] <= 0 || options.validation.top_k == 0) continue;
    TF_RETURN_IF_ERROR(measure_task(static_cast<int>(t)));
    TF_ASSIGN_OR_RETURN(WinnerValidation winners,
                        ValidateWinners(*measurer, results_per_task[t], options.validation));
    for (Record& r : ValidatedRecords(*tasks[t], winners))
      validated_records.push_back(std::move(r));
    progress << absl::StrFormat("[local] task %d: %d configs validated; best ", t,
                                winners.candidates.size());
    if (winners.best.has_value()) {
      const Validation& best = winners.candidates[*winners.best].validation;
      summary.best_cost_s[t] = best.cost_s();
      summary.validated[t] = true;
      summary.validation_passes[t] = static_cast<int>(best.pass_costs.size());
      summary.validation_spread[t] = best.rel_spread();
      progress << absl::StrFormat("%.4f ms validated (%s; search figure %.4f ms)\n",
                                  best.cost_s() * 1e3, DescribeValidation(best),
                                  winners.candidates[*winners.best].search.MeanCost() * 1e3);
    } else {
      progress << absl::StrFormat("%.4f ms search figure, not validated: no pass succeeded\n",
                                  summary.search_best_cost_s[t] * 1e3);
    }
  }
  if (measurer != nullptr) summary.timings.Add(measurer->timings());
  measurer.reset();
  if (!log.empty() && !validated_records.empty()) {
    TF_ASSIGN_OR_RETURN(summary.validated_lines, WriteValidationsToLog(log, validated_records));
  }
  for (size_t t = 0; t < n; ++t) {
    if (summary.best_cost_s[t] <= 0) {
      ++summary.untuned_tasks;
      continue;
    }
    // The same weights as JobRunner::EstimatedLatency.
    const double weight = spec.tasks(t).has_weight() ? spec.tasks(t).weight() : 1;
    summary.estimated_latency_s += weight * summary.best_cost_s[t];
  }
  summary.wall_seconds = clock->NowSeconds() - start;
  return summary;
}

}  // namespace tunefleet
