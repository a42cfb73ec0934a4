#include "local/tune_command.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "local/validation_log.h"
#include "proto_convert/task_spec.h"
#include "toolchain/default_config.h"
#include "toolchain/register_fit.h"
#include "tuner_core/records/best_record.h"
#include "tuner_core/records/record_file.h"
#include "tuner_core/records/task_record.h"
#include "tuner_core/tuners/tuner_factory.h"
#include "tuner_core/tuners/xgb_tuner.h"

namespace tunefleet {
namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The cheapest successful result, or null.
const TrialResult* SearchBest(const std::vector<TrialResult>& results) {
  const TrialResult* best = nullptr;
  for (const TrialResult& r : results) {
    if (r.result.ok() && (best == nullptr || r.result.MeanCost() < best->result.MeanCost())) {
      best = &r;
    }
  }
  return best;
}

// Validates the winners of `results` (when options ask for it), fills the
// summary's best and validation fields, prints the validation table and
// writes the validations into the log.
[[nodiscard]] absl::Status ValidateAndReport(const TuneCommandOptions& options, const Task& task,
                                             LocalMeasurer& measurer,
                                             const std::vector<TrialResult>& results,
                                             TuneSummary& summary, std::ostream& progress,
                                             std::ostream& out) {
  const double flops = task.workload().flops();
  const TrialResult* search_best = SearchBest(results);
  if (search_best == nullptr) return absl::OkStatus();
  summary.search_best_cost_seconds = search_best->result.MeanCost();
  summary.search_best_gflops = flops / summary.search_best_cost_seconds / 1e9;
  summary.search_best_config = search_best->config.ToJson();
  summary.best_cost_seconds = summary.search_best_cost_seconds;
  summary.best_gflops = summary.search_best_gflops;
  summary.best_search_gflops = summary.search_best_gflops;
  summary.best_config = summary.search_best_config;

  const LocalValidationOptions& validation = options.local.validation;
  if (validation.top_k == 0) return absl::OkStatus();
  progress << options.task_label << " validating up to the top " << validation.top_k << " configs, "
           << validation.passes << " passes each, each measurement in a fresh runner child\n";
  const double seconds_before = measurer.timings().validation_seconds;
  TF_ASSIGN_OR_RETURN(WinnerValidation winners, ValidateWinners(measurer, results, validation));
  summary.validated_configs = static_cast<int>(winners.candidates.size());
  out << absl::StrFormat("Validation: %d configs x %d passes in %.1f s\n",
                         winners.candidates.size(), validation.passes,
                         measurer.timings().validation_seconds - seconds_before);
  for (const ValidatedCandidate& c : winners.candidates) {
    out << absl::StrFormat("  config %d: search %.2f GFLOPS, ", c.config.index(),
                           flops / c.search.MeanCost() / 1e9);
    if (c.validation.ok()) {
      out << absl::StrFormat("validated %.2f GFLOPS (%s)", flops / c.validation.cost_s() / 1e9,
                             DescribeValidation(c.validation));
    } else {
      out << DescribeValidation(c.validation);
    }
    if (!c.last_error.empty()) out << "; last error: " << c.last_error;
    out << "\n";
  }
  if (winners.best.has_value()) {
    const ValidatedCandidate& best = winners.candidates[*winners.best];
    summary.best_validated = true;
    summary.best_cost_seconds = best.validation.cost_s();
    summary.best_gflops = flops / summary.best_cost_seconds / 1e9;
    summary.best_config = best.config.ToJson();
    summary.best_search_gflops = flops / best.search.MeanCost() / 1e9;
    summary.best_validation_passes = static_cast<int>(best.validation.pass_costs.size());
    summary.best_validation_spread = best.validation.rel_spread();
  }
  if (!options.log.empty()) {
    const std::vector<Record> records = ValidatedRecords(task, winners);
    TF_ASSIGN_OR_RETURN(summary.validated_lines, WriteValidationsToLog(options.log, records));
    if (summary.validated_lines < static_cast<int>(records.size())) {
      out << "warning: " << records.size() - summary.validated_lines
          << " validated configs have no TuneFleet record line in " << options.log
          << " to carry their validation\n";
    }
  }
  return absl::OkStatus();
}

// "Best: ..." with which figure it is.
std::string BestLine(const TuneSummary& s, const LocalValidationOptions& validation) {
  std::string figure;
  if (s.best_validated) {
    figure = absl::StrFormat(
        "validated (median of %d pass%s, spread %.1f %%; search figure %.2f GFLOPS)",
        s.best_validation_passes, s.best_validation_passes == 1 ? "" : "es",
        100 * s.best_validation_spread, s.best_search_gflops);
  } else if (validation.top_k > 0) {
    figure = "search figure, not validated: no validation pass succeeded";
  } else {
    figure = "search figure, not validated";
  }
  return absl::StrFormat("Best: %.2f GFLOPS %s, %.3f ms, config %s\n", s.best_gflops, figure,
                         s.best_cost_seconds * 1e3, s.best_config.dump());
}

}  // namespace

[[nodiscard]] absl::StatusOr<nlohmann::json> WorkloadArgsFromShape(const std::string& workload,
                                                                   const std::string& shape,
                                                                   const std::string& layout) {
  std::vector<const char*> keys;
  if (workload == "dense") {
    keys = {"M", "N", "K"};
  } else if (workload == "batch_matmul") {
    keys = {"B", "M", "N", "K"};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--shape is for dense (M,N,K) and batch_matmul (B,M,N,K); give ", workload,
                     "'s arguments as JSON with --args"));
  }
  const std::string wanted = absl::StrJoin(keys, ",");
  std::vector<std::string> parts = absl::StrSplit(shape, ',');
  if (parts.size() != keys.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shape \"", shape, "\": ", workload, " wants ", wanted));
  }
  nlohmann::json args = {{"layout", layout}};
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(parts[i], &v)) {
      return absl::InvalidArgumentError(absl::StrCat("--shape \"", shape, "\": \"", parts[i],
                                                     "\" is not an integer (", workload, " wants ",
                                                     wanted, ")"));
    }
    args[keys[i]] = v;
  }
  return args;
}

[[nodiscard]] absl::StatusOr<std::shared_ptr<const PretunedRecords>> LoadPretunedRecords(
    const std::string& choice, const TargetSpec& target) {
  if (choice == "none") return std::make_shared<const PretunedRecords>();
  if (choice.empty()) return PretunedRecords::Shipped(target.family());
  TF_ASSIGN_OR_RETURN(PretunedRecords records, PretunedRecords::ReadFile(choice));
  return std::make_shared<const PretunedRecords>(std::move(records));
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

[[nodiscard]] absl::StatusOr<TuneSummary> RunTune(const TuneCommandOptions& options,
                                                  std::ostream& progress, std::ostream& out) {
  const Stopwatch watch(MeasurerClock(options.local));
  TF_RETURN_IF_ERROR(options.local.validation.Validate());
  nlohmann::json args = options.args;
  if (args.is_null()) {
    TF_ASSIGN_OR_RETURN(args,
                        WorkloadArgsFromShape(options.workload, options.shape, options.layout));
  }
  const std::string target = options.target.empty() ? HostTargetString() : options.target;
  // The same spec -> task path as a job submitted to the fleet.
  TF_ASSIGN_OR_RETURN(
      std::unique_ptr<Task> task,
      TaskFromSpec(MakeTaskSpec(options.template_name, options.workload, args, target)));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<LocalMeasurer> measurer,
                      LocalMeasurer::Create(*task, options.local));
  TunerOptions tuner_options;
  tuner_options.seed = options.seed;
  tuner_options.task = task.get();
  tuner_options.xgb.plan_size = options.plan_size;
  if (!options.transfer_log.empty()) {
    TF_ASSIGN_OR_RETURN(ReadReport history, ReadRecords(options.transfer_log));
    for (const std::string& w : history.warnings) out << "warning: " << w << "\n";
    tuner_options.history = std::move(history.records);
  }
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Tuner> tuner,
                      MakeTuner(options.tuner, task->space(), tuner_options));
  auto* model_tuner = dynamic_cast<XgbTuner*>(tuner.get());
  // A search spends its trials on kernels this target can build: the tiles
  // its registers cannot hold are skipped before measuring, as the builder
  // would refuse them. The given tuner measures exactly what it is given.
  // Its default config (what an untuned compile runs) is measured first, so
  // the records never lose to it.
  if (options.tuner != "given") {
    tuner->SetConfigCheck(RegisterTileCheck(*task, measurer->target()));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const PretunedRecords> pretuned,
                        LoadPretunedRecords(options.pretuned, measurer->target()));
    tuner->SetFirstConfigs(FirstConfigs(*task, measurer->target(), *pretuned));
  }

  TuneSummary summary;
  summary.task_name = task->name();
  summary.workload = task->workload().Describe();
  summary.target = target;

  // Every result of this task, resumed ones first: the validation's candidates.
  std::vector<TrialResult> results;
  std::unique_ptr<RecordWriter> writer;
  if (!options.log.empty()) {
    if (options.resume) {
      absl::StatusOr<ReadReport> earlier = ReadRecords(options.log);
      if (earlier.ok()) {
        for (const Record& r : earlier->records) {
          if (!IsRecordOf(r, *task)) continue;
          absl::StatusOr<Config> config = task->space().FromJson(r.config);
          if (!config.ok()) continue;  // a record of an older space: measure again
          tuner->MarkVisited(config->index());
          results.push_back(TrialResult{*std::move(config), r.result});
          ++summary.resumed;
        }
        // Model-based tuners learn from the earlier run too.
        tuner->Update(results);
      } else if (earlier.status().code() != absl::StatusCode::kNotFound) {
        return earlier.status();
      }
    }
    TF_ASSIGN_OR_RETURN(writer, RecordWriter::Open(options.log));
  }

  out << "Tuning " << summary.workload << " with " << task->name() << " (" << task->space().size()
      << " configs) on \"" << target << "\", tuner " << options.tuner << ", " << options.trials
      << " trials";
  if (summary.resumed > 0)
    out << ", " << summary.resumed << " configs already in " << options.log << " skipped";
  out << "\n";
  if (model_tuner != nullptr && !options.transfer_log.empty()) {
    out << "Transfer: " << model_tuner->history_records() << " records of "
        << model_tuner->history_workloads() << " other shapes from " << options.transfer_log
        << "\n";
  }

  absl::Status write_status;
  std::vector<TuneCallback> callbacks;
  callbacks.push_back([&](const std::vector<TrialResult>& batch) {
    results.insert(results.end(), batch.begin(), batch.end());
  });
  if (writer) {
    callbacks.push_back([&](const std::vector<TrialResult>& batch) {
      for (const TrialResult& trial : batch) {
        absl::Status s = writer->Append(RecordOf(*task, trial.config, trial.result));
        if (!s.ok() && write_status.ok()) write_status = s;
      }
    });
  }
  TuneOptions tune_options;
  tune_options.n_trial = options.trials;
  tune_options.early_stopping = options.early_stopping;
  tune_options.batch_size = options.batch_size;
  tune_options.flops = task->workload().flops();
  tune_options.progress_stream = &progress;
  tune_options.task_label = options.task_label;
  TF_RETURN_IF_ERROR(tuner->Tune(*measurer, tune_options, callbacks));
  TF_RETURN_IF_ERROR(write_status);
  writer.reset();  // the log may be rewritten with the validations

  summary.trials = tuner->trials_done();
  summary.refused_before_measuring = tuner->refused_before_measuring();
  if (summary.refused_before_measuring > 0) {
    out << summary.refused_before_measuring << " proposed configs skipped before measuring: \""
        << target << "\" cannot build them (a register tile or vector too large)\n";
  }
  TF_RETURN_IF_ERROR(ValidateAndReport(options, *task, *measurer, results, summary, progress, out));
  summary.timings = measurer->timings();
  summary.wall_seconds = watch.ElapsedSeconds();

  const LocalTimings& t = summary.timings;
  if (summary.best_config.is_null()) {
    out << "No config succeeded.\n";
  } else {
    out << BestLine(summary, options.local.validation);
  }
  out << absl::StrFormat(
      "Time: %.1f s for %d trials | build %.1f s wall (median %.1f ms per candidate) | "
      "kernel runs %.1f s | checks %.1f s | reference %.1f s | overhead %.2f ms per trial | "
      "validation %.1f s\n",
      summary.wall_seconds, summary.trials, t.build_wall_seconds,
      Median(t.build_seconds_each) * 1e3, t.run_seconds, t.check_seconds, t.prepare_seconds,
      t.OverheadPerTrialSeconds() * 1e3, t.validation_seconds);
  if (model_tuner != nullptr) {
    const ModelTimings& m = model_tuner->model_timings();
    summary.model_seconds = m.total_seconds();
    out << absl::StrFormat(
        "Model: %.2f s (fit %.2f s in %d fits, select %.2f s, transfer %.2f s) = %.1f%% of the "
        "run\n",
        m.total_seconds(), m.fit_seconds, m.fits, m.select_seconds, m.transfer_seconds,
        100.0 * m.total_seconds() / std::max(summary.wall_seconds, 1e-9));
    for (const XgbTuner::HistoryShapeReport& h : model_tuner->history_shapes()) {
      out << absl::StrFormat(
          "History %s: %d records, weight now %.3f, its model orders %.0f%% of own result pairs "
          "right\n",
          h.workload_args, h.records, h.weight, 100 * h.ranking_accuracy);
    }
    if (!model_tuner->model_status().ok())
      out << "Model warning: " << model_tuner->model_status().message() << "\n";
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
