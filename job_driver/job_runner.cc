#include "job_driver/job_runner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "proto_convert/measure_result.h"
#include "proto_convert/task_spec.h"
#include "target/arch_registry.h"
#include "target/target_spec.h"
#include "tuner_core/pretuned/pretuned_records.h"
#include "tuner_core/records/task_record.h"
#include "tuner_core/selective/similarity.h"
#include "tuner_core/templates/register_fit.h"
#include "tuner_core/tuners/tuner_factory.h"

namespace tunefleet {
namespace {

// Each task's budget: trials_per_task when set; otherwise the whole n_trial
// for the gradient policy (it decides the split) and an equal share for the
// fixed policies.
int64_t TaskBudget(const proto::JobSpec& spec, TaskSchedulePolicy policy, int num_tasks) {
  if (spec.has_trials_per_task()) return spec.trials_per_task();
  if (policy == TaskSchedulePolicy::kGradient || num_tasks <= 1) return spec.n_trial();
  return std::max<int64_t>(1, (spec.n_trial() + num_tasks - 1) / num_tasks);
}

// The register-fit check of `task` on the vectors its submitter resolved
// (TaskSpec.vectors); empty when the spec has none. InvalidArgument for an
// unknown triple or counts no target has.
[[nodiscard]] absl::StatusOr<Tuner::ConfigCheck> CheckFromSpec(const proto::TaskSpec& spec,
                                                               const Task& task) {
  if (!spec.has_vectors()) return Tuner::ConfigCheck();
  const proto::TargetVectors& v = spec.vectors();
  TargetSpec target;
  target.original = spec.target();
  target.triple = v.triple();
  target.arch = FindArch(v.triple());
  if (target.arch == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("task vectors: unknown triple \"", v.triple(), "\""));
  }
  // A register count (0: none, nothing is checked) needs vectors of at
  // least one fp32 lane, or every config would be refused.
  constexpr int kMinBits = 32, kMaxBits = 4096, kMaxRegisters = 1024;
  const auto bits_ok = [&](int bits) {
    return bits <= kMaxBits && (v.vector_registers() == 0 ? bits >= 0 : bits >= kMinBits);
  };
  if (v.vector_registers() < 0 || v.vector_registers() > kMaxRegisters ||
      !bits_ok(v.vector_bits()) || !bits_ok(v.max_vector_bits())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task vectors: vector_bits ", v.vector_bits(), ", max_vector_bits ", v.max_vector_bits(),
        ", vector_registers ", v.vector_registers(), " (registers 0..", kMaxRegisters,
        "; with registers, bits ", kMinBits, "..", kMaxBits, ")"));
  }
  target.vector_bits = v.vector_bits();
  target.max_vector_bits = v.max_vector_bits();
  target.vector_registers = v.vector_registers();
  return RegisterTileCheck(task, std::move(target));
}

}  // namespace

JobRunner::~JobRunner() = default;

absl::StatusOr<std::unique_ptr<JobRunner>> JobRunner::Create(const proto::JobAssignment& assignment,
                                                             ClockInterface* clock,
                                                             const TunerSetup& setup) {
  if (clock == nullptr) return absl::InvalidArgumentError("JobRunner needs a clock");
  proto::JobSpec spec = assignment.spec();
  TF_RETURN_IF_ERROR(CanonicalizeJobTasks(spec));
  if (spec.tasks_size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat("job ", assignment.job_id(), " has no task"));
  }
  if (spec.has_time_budget_s() &&
      !(std::isfinite(spec.time_budget_s()) && spec.time_budget_s() > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("job ", assignment.job_id(),
                                                   ": time_budget_s must be > 0 seconds, got ",
                                                   spec.time_budget_s()));
  }
  std::unique_ptr<JobRunner> runner(new JobRunner(assignment.job_id(), spec));
  for (int i = 0; i < spec.tasks_size(); ++i) {
    absl::StatusOr<std::unique_ptr<Task>> made = TaskFromSpec(spec.tasks(i).task());
    if (!made.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("job ", assignment.job_id(), " task ", i, ": ", made.status().message()));
    }
    TaskRun& run = runner->tasks_.emplace_back();
    run.task = *std::move(made);
    run.weight = spec.tasks(i).has_weight() ? spec.tasks(i).weight() : 1;
    TunerOptions tuner_options;
    tuner_options.seed = spec.seed() + static_cast<uint64_t>(i);
    tuner_options.task = run.task.get();  // owned by the run, outlives the tuner
    tuner_options.given.assign(spec.given_configs().begin(), spec.given_configs().end());
    if (spec.has_plan_size()) tuner_options.xgb.plan_size = spec.plan_size();
    tuner_options.history = setup.history;
    tuner_options.prior_for = setup.prior_for;
    TF_ASSIGN_OR_RETURN(run.tuner, MakeTuner(spec.tuner(), run.task->space(), tuner_options));
    // What the target cannot build is skipped before it is proposed: by the
    // driver's check (local mode), else by the vectors the submitter resolved.
    if (setup.check_for && spec.tuner() != "given") {
      run.tuner->SetConfigCheck(setup.check_for(*run.task));
    } else if (spec.tuner() != "given") {
      absl::StatusOr<Tuner::ConfigCheck> check = CheckFromSpec(spec.tasks(i).task(), *run.task);
      if (!check.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("job ", assignment.job_id(), " task ", i, ": ", check.status().message()));
      }
      if (*check) run.tuner->SetConfigCheck(*std::move(check));
    }
    if (setup.first_for && spec.tuner() != "given") {
      run.tuner->SetFirstConfigs(setup.first_for(*run.task));
    }
  }
  runner->clock_ = clock;
  runner->started_ = clock->NowSeconds();
  // Trials already done began at (timestamp - all_cost), Unix time: the job
  // has run since the earliest of them.
  double first_began = 0;
  for (const proto::KnownTrial& t : assignment.trials()) {
    if (!t.done() || t.result().timestamp() <= 0) continue;
    const double began = t.result().timestamp() - std::max(0.0, t.result().all_cost());
    if (first_began == 0 || began < first_began) first_began = began;
  }
  if (first_began > 0) {
    const double ran = static_cast<double>(clock->WallNanos()) * 1e-9 - first_began;
    if (ran > 0) runner->started_ -= ran;
  }
  runner->window_ = std::max(1, assignment.suggested_window());
  std::vector<const proto::KnownTrial*> known;
  for (const proto::KnownTrial& t : assignment.trials()) {
    if (t.task_index() < 0 || t.task_index() >= runner->num_tasks()) {
      return absl::InvalidArgumentError(absl::StrCat("job ", assignment.job_id(), " trial ",
                                                     t.trial_id(), ": no task ", t.task_index()));
    }
    known.push_back(&t);
  }
  TF_RETURN_IF_ERROR(runner->Plan(known));
  return runner;
}

absl::StatusOr<JobRunner::FirstConfigFor> JobRunner::ShippedFirstConfigs(
    const proto::JobSpec& spec) {
  if (spec.pretuned_family().empty()) return FirstConfigFor();
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const PretunedRecords> shared,
                      PretunedRecords::Shipped(spec.pretuned_family()));
  if (shared->num_records() == 0) return FirstConfigFor();
  return FirstConfigFor(
      [shared](const Task& task) { return shared->ConfigsFor(task, kPretunedConfigsPerTask); });
}

absl::StatusOr<PriorLookup> JobRunner::ShippedPriors(const proto::JobSpec& spec) {
  if (spec.pretuned_family().empty() || !TunerUsesPrior(spec.tuner())) return PriorLookup();
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const CostModelPriors> shared,
                      CostModelPriors::Shipped(spec.pretuned_family()));
  return PriorsLookup(std::move(shared));
}

PriorLookup JobRunner::PriorsLookup(std::shared_ptr<const CostModelPriors> priors) {
  if (priors == nullptr || priors->priors().empty()) return PriorLookup();
  return [priors = std::move(priors)](const std::string& template_name, FeatureKind feature) {
    return priors->For(template_name, feature);
  };
}

absl::Status JobRunner::Plan(const std::vector<const proto::KnownTrial*>& known) {
  const std::string policy_name = spec_.task_policy().empty() ? "gradient" : spec_.task_policy();
  TF_ASSIGN_OR_RETURN(TaskSchedulePolicy policy, ParseTaskSchedulePolicy(policy_name));
  share_schedules_ = spec_.has_share_schedules() ? spec_.share_schedules()
                                                 : policy == TaskSchedulePolicy::kGradient;
  const int n = num_tasks();
  transfer_ = spec_.transfer_between_tasks();  // unset: off
  if (transfer_ && n > 1) PlanTransfer();
  if (!spec_.selective().empty() && n > 1) {
    TF_ASSIGN_OR_RETURN(TopK top, ParseTopK(spec_.selective()));
    selective_ = top;
    std::vector<const ConfigSpace*> spaces;
    for (const TaskRun& t : tasks_) spaces.push_back(&t.task->space());
    SelectiveOptions options;
    if (spec_.has_selective_threshold()) options.threshold = spec_.selective_threshold();
    const SelectivePlan plan = PlanSelectiveTuning(spaces, options);
    for (int t = 0; t < n; ++t) tasks_[t].depends_on = plan.depends_on[t];
    followup_ = spec_.has_selective_followup_trials() ? spec_.selective_followup_trials() : 0;
  }
  std::vector<SchedulerTask> scheduled;
  int tuned_from_start = 0;
  // Ansor's similar tasks: those of one template bound each other's
  // expected throughput.
  std::map<std::string, int> groups;
  for (int t = 0; t < n; ++t) {
    TaskRun& run = tasks_[t];
    const bool dependent = selective_ && run.depends_on != t;
    if (dependent && followup_ <= 0) continue;
    run.scheduler_index = static_cast<int>(scheduled_tasks_.size());
    scheduled_tasks_.push_back(t);
    // A dependent with follow-up trials waits, held, for its seeds.
    scheduled.push_back(
        {.weight = run.weight,
         .flops = run.task->workload().flops(),
         .group = groups.emplace(run.task->name(), static_cast<int>(groups.size())).first->second,
         .max_trials = -1,
         .held = dependent});
    tuned_from_start += dependent ? 0 : 1;
  }
  TaskSchedulerOptions options;
  options.policy = policy;
  // Selective tuning without trials_per_task: an equal share of the budget
  // over every task, so the dependents' top-k fit in it too.
  options.max_trials_per_task = selective_ && !spec_.has_trials_per_task()
                                    ? std::max<int64_t>(1, spec_.n_trial() / n)
                                    : TaskBudget(spec_, policy, tuned_from_start);
  options.early_stopping =
      spec_.has_early_stopping() && spec_.early_stopping() >= 0 ? spec_.early_stopping() : -1;
  // Ansor's warm-up is one short round over the tasks: an eighth of each
  // task's fair share of the budget (1 to 16 trials).
  const int64_t fair_share = spec_.n_trial() / std::max<int64_t>(1, tuned_from_start);
  options.warmup_trials = std::clamp<int64_t>(fair_share / 8, 1, options.warmup_trials);
  scheduler_ = std::make_unique<TaskScheduler>(std::move(scheduled), options);

  // Replay what the tracker knows: results in the order they came, so the
  // scheduler's state is what it was; trials in flight stay in flight.
  std::vector<const proto::KnownTrial*> done;
  for (const proto::KnownTrial* k : known) {
    TaskRun& run = tasks_[k->task_index()];
    run.tuner->MarkVisited(k->config_index());
    ++run.known;
    ++known_;
    if (run.scheduler_index >= 0) scheduler_->Assign(run.scheduler_index);
    if (k->done()) {
      done.push_back(k);
    } else {
      ++run.in_flight;
      ++in_flight_;
    }
  }
  std::stable_sort(done.begin(), done.end(), [](const auto* a, const auto* b) {
    return a->result().timestamp() < b->result().timestamp();
  });
  for (const proto::KnownTrial* k : done) {
    ++tasks_[k->task_index()].in_flight;  // Learn takes it out again
    ++in_flight_;
    Learn(k->task_index(), k->config_json(), k->result());
  }
  // Selective dependents measure their first configs (the shipped records,
  // the default) now, not only once their representatives are done: those
  // may not be before the job's time is up.
  for (int t = 0; t < n; ++t) {
    TaskRun& run = tasks_[t];
    if (!selective_ || run.depends_on == t || run.seeded) continue;
    for (Config& c : run.tuner->TakeFirstConfigs(std::numeric_limits<int>::max())) {
      seeds_.emplace_back(t, std::move(c));
    }
  }
  // Tasks whose spaces the known trials used up, and representatives that
  // were done before the takeover, settle now (their dependents get what
  // they still lack of their top-k).
  for (int t = 0; t < n; ++t) Settle(t);
  return absl::OkStatus();
}

void JobRunner::Learn(int task, const std::string& config_json, const proto::TrialResult& result) {
  TaskRun& run = tasks_[task];
  ++done_;
  ++run.done;
  run.in_flight = std::max<int64_t>(0, run.in_flight - 1);
  in_flight_ = std::max<int64_t>(0, in_flight_ - 1);
  MeasureResult m = ToMeasureResult(result);
  const double cost = m.ok() ? m.MeanCost() : 0;
  last_gflops_ = GflopsOf(run.task->workload().flops(), cost);
  run.best.Offer(m);
  if (run.scheduler_index >= 0) {
    absl::Status counted = scheduler_->OnResult(run.scheduler_index, cost, result.all_cost());
    if (!counted.ok()) {
      TF_LOG(WARNING) << "job " << job_id_ << ": " << counted;
    }
  }
  absl::StatusOr<Config> config = run.task->space().FromJsonString(config_json);
  if (!config.ok()) {
    TF_LOG(WARNING) << "job " << job_id_ << " task " << task
                    << ": a result for a config outside the space: " << config.status();
  } else {
    if (m.ok()) run.successes.emplace_back(cost, *config);
    // An infrastructure outcome says nothing of the config: not learned.
    if (!result.infrastructure()) {
      if (transfer_) run.records.push_back(RecordOf(*run.task, *config, m));
      run.tuner->Update({TrialResult{*std::move(config), std::move(m)}});
      // At kTransferEvery results, then each time they double: a learner
      // retrains the shape it has of this task each time (a fit), so
      // offering every kTransferEvery results cost a fleet of 16 agents a
      // third of its trials in the tuner.
      const size_t n = run.records.size();
      if (transfer_ && n >= kTransferEvery && n % kTransferEvery == 0 &&
          ((n / kTransferEvery) & (n / kTransferEvery - 1)) == 0) {
        OfferRecords(task);
      }
    }
  }
  Settle(task);
}

void JobRunner::PlanTransfer() {
  const int n = num_tasks();
  for (int t = 0; t < n; ++t) {
    const Task& task = *tasks_[t].task;
    std::vector<std::pair<double, int>> similar;  // (-similarity, task): most similar first
    for (int o = 0; o < n; ++o) {
      const Task& other = *tasks_[o].task;
      if (o == t || other.name() != task.name() || other.target() != task.target() ||
          other.workload().name() != task.workload().name() ||
          other.workload().args() == task.workload().args()) {
        continue;
      }
      similar.emplace_back(-SpaceSimilarity(task.space(), other.space()), o);
    }
    std::sort(similar.begin(), similar.end());
    for (size_t i = 0; i < similar.size() && i < static_cast<size_t>(kTransferSources); ++i) {
      tasks_[t].learns_from.push_back(similar[i].second);
    }
  }
}

void JobRunner::OfferRecords(int task) {
  for (int t = 0; t < num_tasks(); ++t) {
    TaskRun& learner = tasks_[t];
    if (t == task || (learner.scheduler_index >= 0 && scheduler_->done(learner.scheduler_index)) ||
        std::find(learner.learns_from.begin(), learner.learns_from.end(), task) ==
            learner.learns_from.end()) {
      continue;
    }
    learner.tuner->LearnFromOtherTask(tasks_[task].records);
  }
}

bool JobRunner::Settle(int task) {
  const TaskRun& run = tasks_[task];
  if (run.scheduler_index < 0) return false;
  if (!run.tuner->HasNext()) scheduler_->Exhaust(run.scheduler_index);
  // Selective: a representative that is done and has nothing in flight
  // hands its winners to its dependents.
  if (!selective_ || !scheduler_->done(run.scheduler_index) || run.in_flight > 0) return false;
  const size_t before = seeds_.size();
  SeedDependents(task);
  return seeds_.size() > before;
}

void JobRunner::SeedDependents(int representative) {
  TaskRun& rep = tasks_[representative];
  std::vector<std::pair<double, Config>> ranked = rep.successes;
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // "topN": N configs, topped up from the dependent's own search when the
  // representative has fewer winners; "P%": P % of its winners, at least 1.
  const int k = selective_->percent > 0
                    ? std::max(1, selective_->Of(static_cast<int>(ranked.size())))
                    : selective_->count;
  for (int t = 0; t < num_tasks(); ++t) {
    TaskRun& dep = tasks_[t];
    if (dep.seeded || dep.depends_on != representative || t == representative) continue;
    dep.seeded = true;
    // Configs it already has (proposed before a takeover) count.
    const int want = std::max<int>(0, k - static_cast<int>(dep.known));
    int queued = 0;
    // The winners in order, each carried to the nearest config of this
    // space (the same one where its values exist here); winners that land on
    // a config already taken give way to the next ones.
    for (int i = 0; i < static_cast<int>(ranked.size()) && queued < want; ++i) {
      Config mapped = MapConfigNearest(ranked[i].second, dep.task->space());
      if (dep.tuner->IsVisited(mapped.index())) continue;
      dep.tuner->MarkVisited(mapped.index());
      seeds_.emplace_back(t, std::move(mapped));
      ++queued;
    }
    // Fewer distinct configs than k: its own search tops them up, so every
    // dependent measures k configs.
    if (queued < want && dep.tuner->HasNext()) {
      for (Config& c : dep.tuner->NextBatch(want - queued)) seeds_.emplace_back(t, std::move(c));
    }
    // Follow-up: from now on the scheduler may pick it, up to k + F trials.
    if (dep.scheduler_index >= 0) scheduler_->Release(dep.scheduler_index, k + followup_);
    TF_LOG(INFO) << "job " << job_id_ << ": task " << t << " takes " << queued << " of task "
                 << representative << "'s top " << k << " configs";
  }
}

std::optional<Config> JobRunner::SharedSchedule(int task) {
  TaskRun& run = tasks_[task];
  const double own_flops_per_s =
      run.best.has_best() ? run.task->workload().flops() / run.best.cost_s() : 0;
  // The fastest other task of the same template, by throughput.
  int source = -1;
  double source_flops_per_s = own_flops_per_s;
  for (int t = 0; t < num_tasks(); ++t) {
    const TaskRun& other = tasks_[t];
    if (t == task || other.successes.empty() || !other.best.has_best() ||
        other.task->name() != run.task->name()) {
      continue;
    }
    const double flops_per_s = other.task->workload().flops() / other.best.cost_s();
    if (flops_per_s > source_flops_per_s) {
      source = t;
      source_flops_per_s = flops_per_s;
    }
  }
  if (source < 0) return std::nullopt;
  const auto& successes = tasks_[source].successes;
  const auto best =
      std::min_element(successes.begin(), successes.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  if (!run.shared.insert({source, best->second.index()}).second) return std::nullopt;
  Config mapped = MapConfigNearest(best->second, run.task->space());
  if (run.tuner->IsVisited(mapped.index())) return std::nullopt;
  run.tuner->MarkVisited(mapped.index());
  return mapped;
}

void JobRunner::Propose(proto::ProposeTrials& p, int task, const Config& config) {
  proto::ProposedConfig* pc = p.add_configs();
  pc->set_config_json(config.ToJson().dump());
  pc->set_config_index(config.index());
  pc->set_task_index(task);
  ++tasks_[task].known;
  ++tasks_[task].in_flight;
  ++known_;
  ++in_flight_;
}

bool JobRunner::OutOfTime() const {
  return spec_.has_time_budget_s() && clock_->NowSeconds() - started_ >= spec_.time_budget_s();
}

bool JobRunner::NothingMoreToPropose() const {
  if (OutOfTime()) return true;
  if (!seeds_.empty()) return false;
  for (const TaskRun& run : tasks_) {
    if (run.scheduler_index >= 0 ? !scheduler_->done(run.scheduler_index) : !run.seeded) {
      return false;
    }
  }
  return true;
}

proto::ProposeTrials JobRunner::NextProposals() {
  proto::ProposeTrials p;
  p.set_job_id(job_id_);
  if (finished_sent_) return p;
  // A round whose picks all went to tasks with nothing left to propose
  // (their spaces exhausted, or representatives that just handed over to
  // their dependents) is tried again: the tasks it settled are out of the
  // way, so a proposal is empty only when there is nothing to propose now.
  for (int round = 0; round <= num_tasks() && p.configs_size() == 0 && !OutOfTime(); ++round) {
    if (!ProposeRound(p)) break;
  }
  if (p.configs_size() > 0) awaiting_answer_.push_back(TasksOf(p));
  if (NothingMoreToPropose() && known_ < spec_.n_trial()) {
    finished_sent_ = true;
    p.set_finished(true);
    p.set_finish_reason(
        OutOfTime() ? absl::StrCat("the time budget (", spec_.time_budget_s(),
                                   " s) is spent after ", done_, " trials")
        : num_tasks() == 1
            ? absl::StrCat("the search ended after ", done_, " trials (",
                           tasks_[0].tuner->HasNext() ? "early stopping" : "space exhausted", ")")
            : absl::StrCat("every task is done (budget, early stopping or space exhausted",
                           selective_ ? ", or its representative's top-k measured" : "", ") after ",
                           done_, " trials"));
    if (p.configs_size() == 0) awaiting_answer_.push_back({});
  }
  return p;
}

bool JobRunner::ProposeRound(proto::ProposeTrials& p) {
  int64_t room = std::min<int64_t>(window_ - in_flight_, spec_.n_trial() - known_);
  // Selective dependents' configs first: they are few and their
  // representatives are done.
  while (room > 0 && !seeds_.empty()) {
    const int task = seeds_.front().first;
    if (tasks_[task].scheduler_index >= 0) scheduler_->Assign(tasks_[task].scheduler_index);
    Propose(p, task, seeds_.front().second);
    seeds_.pop_front();
    --room;
  }
  // Then the scheduler's picks, grouped per task so each tuner proposes a
  // batch (the learning tuners plan per batch).
  std::map<int, int> wanted;  // task -> configs
  for (; room > 0; --room) {
    std::optional<int> s = scheduler_->NextTask();
    if (!s) break;
    ++wanted[scheduled_tasks_[*s]];
  }
  bool settled = false;  // a pick found nothing: the next round picks again
  for (const auto& [task, count] : wanted) {
    TaskRun& run = tasks_[task];
    std::vector<Config> configs;
    if (share_schedules_) {
      if (std::optional<Config> shared = SharedSchedule(task))
        configs.push_back(*std::move(shared));
    }
    if (static_cast<int>(configs.size()) < count && run.tuner->HasNext()) {
      for (Config& c : run.tuner->NextBatch(count - static_cast<int>(configs.size()))) {
        configs.push_back(std::move(c));
      }
    }
    for (const Config& c : configs) Propose(p, task, c);
    for (int i = static_cast<int>(configs.size()); i < count; ++i) {
      scheduler_->Withdraw(run.scheduler_index);
    }
    if (static_cast<int>(configs.size()) < count) settled = true;
    Settle(task);
  }
  return settled || !seeds_.empty();
}

std::vector<int> JobRunner::TasksOf(const proto::ProposeTrials& p) {
  std::vector<int> tasks;
  for (const proto::ProposedConfig& c : p.configs()) tasks.push_back(c.task_index());
  return tasks;
}

void JobRunner::OnAccepted(const proto::TrialsAccepted& accepted) {
  std::vector<int> sent;
  if (!awaiting_answer_.empty()) {
    sent = std::move(awaiting_answer_.front());
    awaiting_answer_.pop_front();
  }
  for (int i = 0; i < accepted.rejected_size(); ++i) {
    // Which config: its position when the tracker says, else the last ones.
    const int position = i < accepted.rejected_positions_size()
                             ? accepted.rejected_positions(i)
                             : static_cast<int>(sent.size()) - accepted.rejected_size() + i;
    TF_LOG(WARNING) << "job " << job_id_
                    << ": the tracker refused a config: " << accepted.rejected(i);
    known_ = std::max<int64_t>(0, known_ - 1);
    in_flight_ = std::max<int64_t>(0, in_flight_ - 1);
    if (position < 0 || position >= static_cast<int>(sent.size())) continue;
    TaskRun& run = tasks_[sent[position]];
    run.known = std::max<int64_t>(0, run.known - 1);
    run.in_flight = std::max<int64_t>(0, run.in_flight - 1);
    if (run.scheduler_index >= 0) scheduler_->Withdraw(run.scheduler_index);
    Settle(sent[position]);
  }
}

void JobRunner::OnTrialUpdate(const proto::TrialUpdate& update) {
  if (update.suggested_window() > 0) window_ = update.suggested_window();
  if (update.task_index() < 0 || update.task_index() >= num_tasks()) {
    TF_LOG(WARNING) << "job " << job_id_ << ": a result for task " << update.task_index()
                    << ", which the job does not have";
    return;
  }
  Learn(update.task_index(), update.config_json(), update.result());
}

double JobRunner::best_gflops() const {
  return tasks_[0].best.Gflops(tasks_[0].task->workload().flops());
}

double JobRunner::EstimatedLatency() const {
  double total = 0;
  for (const TaskRun& run : tasks_) total += run.weight * run.best.cost_s();
  return total;
}

std::string JobRunner::Progress() const {
  if (num_tasks() == 1) {
    return ProgressLine(absl::StrCat("[", job_id_, "]"), last_gflops_, best_gflops(), done_,
                        spec_.n_trial(), clock_->NowSeconds() - started_);
  }
  int tuned = 0;
  for (const TaskRun& run : tasks_) tuned += run.best.has_best() ? 1 : 0;
  return absl::StrFormat(
      "[%s] tasks tuned %d/%d, estimated latency %.4f ms | trials %d/%d | %.1f s", job_id_, tuned,
      num_tasks(), EstimatedLatency() * 1e3, done_, spec_.n_trial(),
      clock_->NowSeconds() - started_);
}

}  // namespace tunefleet
