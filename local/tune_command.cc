#include "local/tune_command.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/median.h"
#include "common/status_macros.h"
#include "local/validate_winners.h"
#include "proto_convert/task_spec.h"
#include "tuner_core/records/best_record.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/tuners/tuner_factory.h"

namespace tunefleet {
namespace {

// " + N s beside measuring" where builds ran ahead (the wall time before
// it: builds nothing overlapped); "" otherwise.
std::string BuiltAhead(const LocalTimings& t) {
  if (t.build_ahead_seconds <= 0) return "";
  return absl::StrFormat(" + %.1f s beside measuring", t.build_ahead_seconds);
}

// "Tuning ...": what the job is, before anything is measured.
[[nodiscard]] absl::Status PrintJob(const proto::JobSpec& spec, const LocalRunOptions& run,
                                    std::ostream& out) {
  if (spec.tasks_size() == 1) {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<Task> task, TaskFromSpec(spec.tasks(0).task()));
    out << "Tuning " << task->workload().Describe() << " with " << task->name() << " ("
        << task->space().size() << " configs) on \"" << task->target() << "\", tuner "
        << spec.tuner() << ", " << spec.n_trial() << " trials";
  } else {
    const std::string policy = spec.task_policy().empty() ? "gradient" : spec.task_policy();
    out << "Tuning " << spec.model() << " as one job: " << spec.tasks_size() << " tasks, "
        << (spec.has_trials_per_task() && spec.trials_per_task() > 0
                ? absl::StrCat(spec.trials_per_task(), " trials per task")
                : std::string("no cap per task (the time budget ends it)"))
        << ", tuner " << spec.tuner() << ", task policy " << policy
        << (spec.selective().empty() ? "" : ", selective " + spec.selective())
        << (spec.selective().empty() || spec.selective_followup_trials() <= 0
                ? ""
                : absl::StrCat(" + ", spec.selective_followup_trials(), " follow-up trials"));
  }
  out << (spec.has_time_budget_s() ? absl::StrFormat(", time budget %.0f s", spec.time_budget_s())
                                   : "")
      << (run.log.empty() ? "" : ", records in " + run.log) << "\n";
  return absl::OkStatus();
}

// The warm start `spec` and `run` ask for, and a line saying what it is.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const PretunedRecords>> WarmStart(
    const proto::JobSpec& spec, const LocalRunOptions& run, std::ostream& out) {
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const PretunedRecords> pretuned,
                      LoadPretunedRecords(spec.pretuned_family(), run.pretuned_file));
  const std::string source = !run.pretuned_file.empty() ? run.pretuned_file
                             : !spec.pretuned_family().empty()
                                 ? "shipped for " + spec.pretuned_family()
                                 : "";
  if (pretuned->num_records() > 0) {
    out << "Warm start: " << pretuned->num_records() << " records of " << pretuned->num_workloads()
        << " workloads (" << source << "), up to " << kPretunedConfigsPerTask
        << " measured first in each task\n";
  } else {
    out << "Cold start: no pretuned records"
        << (source.empty() ? std::string(" (--pretuned=none)") : " (none " + source + ")") << "\n";
  }
  return pretuned;
}

// The cost-model priors `spec` and `run` ask for, and a line saying which;
// none, and nothing read, for a tuner that takes no prior.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const CostModelPriors>> WarmModels(
    const proto::JobSpec& spec, const LocalRunOptions& run, std::ostream& out) {
  if (!TunerUsesPrior(spec.tuner())) return std::shared_ptr<const CostModelPriors>();
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const CostModelPriors> priors,
                      LoadCostModelPriors(spec.pretuned_family(), run.prior_file));
  if (priors->priors().empty()) return priors;
  std::vector<std::string> names;
  for (const CostModelPriors::Prior& p : priors->priors()) {
    names.push_back(
        absl::StrCat(p.template_name, " (", p.records, " trials of ", p.workloads, " workloads)"));
  }
  out << "Cost-model prior ("
      << (run.prior_file.empty() ? "shipped for " + spec.pretuned_family() : run.prior_file)
      << "): " << absl::StrJoin(names, ", ") << "\n";
  return priors;
}

// "Best: ..." with which figure it is.
std::string BestLine(const LocalTaskOutcome& t) {
  std::string figure;
  if (t.validated) {
    figure = absl::StrFormat(
        "validated (median of %d pass%s, spread %.1f %%; search figure %.2f GFLOPS)",
        t.validation_passes, t.validation_passes == 1 ? "" : "es", 100 * t.validation_spread,
        t.flops / t.best_search_cost_s / 1e9);
  } else if (t.validated_configs > 0) {  // validation ran
    figure = "search figure, not validated: no validation pass succeeded";
  } else {
    figure = "search figure, not validated";
  }
  return absl::StrFormat("Best: %.2f GFLOPS %s, %.3f ms, config %s\n", t.best_gflops(), figure,
                         t.best_cost_s * 1e3, t.best_config.dump());
}

// A one-kernel job's report: its best, time split and cost model.
void PrintKernelReport(const proto::JobSpec& spec, const LocalRunOptions& run,
                       const LocalJobSummary& s, std::ostream& out) {
  const LocalTaskOutcome& t = s.tasks[0];
  if (t.refused_before_measuring > 0) {
    out << t.refused_before_measuring << " proposed configs skipped before measuring: \""
        << spec.tasks(0).task().target()
        << "\" cannot build them (a register tile or vector too large)\n";
  }
  if (!run.transfer_log.empty() && t.history_records > 0) {
    out << "Transfer: " << t.history_records << " records of " << t.history_shapes.size()
        << " other shapes from " << run.transfer_log << "\n";
  }
  out << (t.best_config.is_null() ? std::string("No config succeeded.\n") : BestLine(t));
  const LocalTimings& time = s.timings;
  out << absl::StrFormat(
      "Time: %.1f s for %d trials | build %.1f s wall%s (median %.1f ms per candidate) | "
      "kernel runs %.1f s | checks %.1f s | reference %.1f s | overhead %.2f ms per trial | "
      "validation %.1f s\n",
      s.wall_seconds, s.trials, time.build_wall_seconds, BuiltAhead(time),
      Median(time.build_seconds_each) * 1e3, time.run_seconds, time.check_seconds,
      time.prepare_seconds, time.OverheadPerTrialSeconds() * 1e3, time.validation_seconds);
  if (t.model.fits == 0 && t.history_records == 0) return;  // not a model-based tuner
  const ModelTimings& m = t.model;
  out << absl::StrFormat(
      "Model: %.2f s (fit %.2f s in %d fits, select %.2f s, transfer %.2f s) = %.1f%% of the "
      "run\n",
      m.total_seconds(), m.fit_seconds, m.fits, m.select_seconds, m.transfer_seconds,
      100.0 * m.total_seconds() / std::max(s.wall_seconds, 1e-9));
  for (const XgbTuner::HistoryShapeReport& h : t.history_shapes) {
    out << absl::StrFormat(
        "History %s: %d records, weight now %.3f, its model orders %.0f%% of own result pairs "
        "right\n",
        h.workload_args, h.records, h.weight, 100 * h.ranking_accuracy);
  }
  if (!t.model_warning.empty()) out << "Model warning: " << t.model_warning << "\n";
}

// A model job's report: each task's trials and best, the estimated latency.
void PrintModelReport(const proto::JobSpec& spec, const LocalJobSummary& s, std::ostream& out) {
  out << absl::StrFormat("%-6s %-7s %-7s %-11s %s\n", "task", "layers", "trials", "ms x layers",
                         "workload");
  for (int i = 0; i < spec.tasks_size(); ++i) {
    const LocalTaskOutcome& t = s.tasks[i];
    out << absl::StrFormat("%-6d %-7g %-7d %-11.4f %s\n", i, spec.tasks(i).weight(),
                           t.trials + t.resumed, t.best_cost_s * spec.tasks(i).weight() * 1e3,
                           spec.tasks(i).name());
  }
  out << absl::StrFormat("Estimated latency (sum of tuned tasks' best x layers): %.3f ms",
                         s.estimated_latency_s * 1e3);
  if (s.untuned_tasks > 0) out << " (" << s.untuned_tasks << " tasks without a result)";
  out << absl::StrFormat("\n%d trials in %.1f s\n", s.trials, s.wall_seconds);
  const LocalTimings& t = s.timings;
  out << absl::StrFormat(
      "Time: build %.1f s%s (compiler %.1f s over %d builds) | measure %.1f s (workload "
      "preparation %.1f s, kernel runs %.1f s, correctness checks %.1f s) | validation %.1f s\n",
      t.build_wall_seconds, BuiltAhead(t), t.build_cpu_seconds, t.built, t.measure_wall_seconds,
      t.prepare_seconds, t.run_seconds, t.check_seconds, t.validation_seconds);
  ModelTimings m;
  for (const LocalTaskOutcome& task : s.tasks) {
    m.fit_seconds += task.model.fit_seconds;
    m.select_seconds += task.model.select_seconds;
    m.transfer_seconds += task.model.transfer_seconds;
    m.fits += task.model.fits;
    m.selections += task.model.selections;
  }
  if (m.selections > 0 || m.fits > 0) {
    out << absl::StrFormat(
        "Cost models: %.1f s (fit %.1f s in %d fits, select %.1f s in %d selections, transfer "
        "%.1f s)\n",
        m.total_seconds(), m.fit_seconds, m.fits, m.select_seconds, m.selections,
        m.transfer_seconds);
  }
}

}  // namespace

[[nodiscard]] absl::StatusOr<LocalJobSummary> RunTune(const proto::JobSpec& spec_in,
                                                      const LocalRunOptions& run,
                                                      std::ostream& progress, std::ostream& out) {
  proto::JobSpec spec = spec_in;
  TF_RETURN_IF_ERROR(CanonicalizeJobTasks(spec));
  if (spec.tasks_size() == 0) return absl::InvalidArgumentError("the job has no task");
  TF_RETURN_IF_ERROR(PrintJob(spec, run, out));
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const PretunedRecords> pretuned, WarmStart(spec, run, out));
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const CostModelPriors> priors, WarmModels(spec, run, out));
  LocalJobSetup setup{
      .pretuned = pretuned.get(), .priors = priors, .resume = run.resume, .label = run.label};
  if (!run.transfer_log.empty()) {
    TF_ASSIGN_OR_RETURN(ReadReport history, ReadRecords(run.transfer_log));
    for (const std::string& w : history.warnings) out << "warning: " << w << "\n";
    setup.transfer_history = std::move(history.records);
  }
  TF_ASSIGN_OR_RETURN(LocalJobSummary summary,
                      RunLocalJob(spec, run.host, run.log, progress, setup));
  int64_t resumed = 0;
  for (const LocalTaskOutcome& t : summary.tasks) resumed += t.resumed;
  if (resumed > 0) {
    out << resumed << " trials already in " << run.log
        << " resumed (not measured again; they count toward the budget)\n";
  }
  if (summary.validated_lines > 0) {
    out << summary.validated_lines << " lines of " << run.log << " given their validation\n";
  }
  if (spec.tasks_size() == 1) {
    PrintKernelReport(spec, run, summary, out);
  } else {
    PrintModelReport(spec, summary, out);
  }
  return summary;
}

[[nodiscard]] absl::Status RunBest(const std::string& log, std::ostream& out) {
  TF_ASSIGN_OR_RETURN(ReadReport report, ReadRecords(log));
  for (const std::string& w : report.warnings) out << "warning: " << w << "\n";
  std::vector<Record> best = BestPerTask(report.records);
  if (best.empty()) {
    return absl::NotFoundError(
        absl::StrCat(log, ": no successful record among ", report.records.size()));
  }
  for (const Record& r : best) {
    absl::StatusOr<std::unique_ptr<Workload>> workload =
        MakeWorkload(r.workload_name, r.workload_args);
    out << r.task_name << " " << (workload.ok() ? (*workload)->Describe() : r.workload_args.dump())
        << " on \"" << r.target << "\"\n";
    // The reported figure (validated where there is one) and which it is.
    const double cost = r.ReportedCost();
    out << "  ";
    if (workload.ok()) out << absl::StrFormat("%.2f GFLOPS, ", (*workload)->flops() / cost / 1e9);
    out << absl::StrFormat("%.4f ms, ", cost * 1e3);
    if (r.validated()) {
      out << "validated (" << DescribeValidation(*r.validation) << "; search figure ";
      if (workload.ok()) {
        out << absl::StrFormat("%.2f GFLOPS", r.Gflops((*workload)->flops()));
      } else {
        out << absl::StrFormat("%.4f ms", r.result.MeanCost() * 1e3);
      }
      out << ")\n";
    } else {
      out << DescribeFigure(r) << "\n";
    }
    out << "  config " << r.config.dump() << "\n";
  }
  return absl::OkStatus();
}

}  // namespace tunefleet
