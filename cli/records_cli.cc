// tunefleet best, measure and train_prior: the best record per task of
// --log (or of a fleet job, --job), re-measuring the top records on this
// host or on the agents of --key through the fleet, and training the
// cost-model priors the xgb tuner starts from on a family's logs.
#include <iostream>
#include <set>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/cli_commands.h"
#include "cli/fleet_commands.h"
#include "cli/measure_fleet.h"
#include "cli/shared_flags.h"
#include "common/file_util.h"
#include "common/status_macros.h"
#include "local/measure_command.h"
#include "local/tune_command.h"
#include "proto_convert/run_request.h"
#include "toolchain/codegen/target.h"
#include "tuner_core/pretuned/cost_model_prior.h"
#include "tuner_core/records/record_file.h"

ABSL_FLAG(int32_t, top, tunefleet::kDefaultValidateTopK,
          "measure: records re-measured per task (the best by their reported figure)");
ABSL_FLAG(int32_t, passes, tunefleet::kDefaultValidationPasses,
          "measure: measurements of each record (the re-measured cost is their median)");

ABSL_FLAG(std::string, prior_feature, "itervar",
          "train_prior: the feature rows the priors learn on (itervar | knob | curve; the xgb "
          "tuner's are itervar)");

ABSL_FLAG(std::string, holdout_logs, "",
          "train_prior: comma-separated logs whose workloads are left out of training and "
          "on which the priors are then evaluated (rank correlation, what their top 10 find)");
ABSL_FLAG(int32_t, prior_rounds, 0,
          "train_prior: boosting rounds of each prior (0: until the top-256 recall on the "
          "training rows stops improving, as the tuner's own fits stop)");

namespace tunefleet {

[[nodiscard]] absl::Status BestCli(const CliArgs&) {
  const std::string job = FleetJobFlag();
  if (job.empty()) return RunBest(absl::GetFlag(FLAGS_log), std::cout);
  TF_ASSIGN_OR_RETURN(const int task, TaskIndexFromFlag());
  return WithFleetClient(
      [&](FleetClient& client) { return RunFleetBest(client, job, task, std::cout); });
}

[[nodiscard]] absl::Status MeasureCli(const CliArgs&) {
  const RemeasureSelection records =
      RemeasureSelectionFromFlags(absl::GetFlag(FLAGS_top), absl::GetFlag(FLAGS_passes));
  const std::string key = absl::GetFlag(FLAGS_key);
  if (key == "local") {
    MeasureCommandOptions o;
    o.records = records;
    o.local.runner.num_threads = absl::GetFlag(FLAGS_threads);
    TF_ASSIGN_OR_RETURN(o.local.measure, MeasureFromFlags(/*model_job=*/false));
    return RunMeasure(o, std::cerr, std::cout).status();
  }
  return WithFleetClient([&](FleetClient& client) {
    FleetMeasureOptions o;
    o.records = records;
    o.key = key;
    TF_ASSIGN_OR_RETURN(const MeasureOptions measure, MeasureFromFlags(/*model_job=*/false));
    o.measure = ToProto(measure);
    return RunFleetMeasure(client, o, std::cerr, std::cout).status();
  });
}

[[nodiscard]] absl::Status TrainPriorCli(const CliArgs& logs) {
  const std::string out = absl::GetFlag(FLAGS_o);
  if (out.empty() || logs.empty()) {
    return absl::InvalidArgumentError("usage: tunefleet train_prior -o PRIORS.jsonl LOG.jsonl...");
  }
  TF_ASSIGN_OR_RETURN(const FeatureKind feature,
                      ParseFeatureKind(absl::GetFlag(FLAGS_prior_feature)));
  // One family per prior: what one CPU family's trials say.
  std::string family;
  auto read = [&family](const std::string& log, std::vector<Record>& into) -> absl::Status {
    TF_ASSIGN_OR_RETURN(ReadReport report, ReadRecords(log));
    for (const std::string& w : report.warnings) std::cerr << "warning: " << w << "\n";
    for (Record& r : report.records) {
      TF_ASSIGN_OR_RETURN(const TargetSpec target, ParseTarget(r.target));
      if (family.empty()) family = target.family();
      if (target.family() != family) {
        return absl::InvalidArgumentError(
            absl::StrCat(log, ": a record of \"", r.target, "\" (family ", target.family(),
                         ") among records of family ", family, ": train one family at a time"));
      }
      into.push_back(std::move(r));
    }
    return absl::OkStatus();
  };
  std::vector<Record> holdout;
  for (absl::string_view log :
       absl::StrSplit(absl::GetFlag(FLAGS_holdout_logs), ',', absl::SkipEmpty())) {
    TF_RETURN_IF_ERROR(read(std::string(log), holdout));
  }
  std::set<std::string> held_out_workloads;
  auto workload_key = [](const Record& r) {
    return absl::StrCat(r.task_name, " ", r.workload_name, " ", r.workload_args.dump());
  };
  for (const Record& r : holdout) held_out_workloads.insert(workload_key(r));
  std::vector<Record> records;
  int64_t left_out = 0;
  for (const std::string& log : logs) {
    std::vector<Record> read_now;
    TF_RETURN_IF_ERROR(read(log, read_now));
    for (Record& r : read_now) {
      if (held_out_workloads.count(workload_key(r)) > 0) {
        ++left_out;
      } else {
        records.push_back(std::move(r));
      }
    }
  }
  XgbCostModelOptions options = PriorModelOptions();
  if (const int rounds = absl::GetFlag(FLAGS_prior_rounds); rounds > 0) {
    options.max_rounds = rounds;
    options.early_stopping_rounds = rounds;  // never stops early: exactly `rounds`
  }
  CostModelPriors::TrainReport report;
  TF_ASSIGN_OR_RETURN(CostModelPriors priors,
                      CostModelPriors::Train(records, feature, options, &report));
  for (const std::string& w : report.warnings) std::cerr << "warning: " << w << "\n";
  TF_ASSIGN_OR_RETURN(std::string text, priors.Serialize());
  TF_RETURN_IF_ERROR(ReplaceFileAtomically(out, text));
  std::cout << "Trained on " << report.records_used << " trials (" << report.records_skipped
            << " skipped) of family " << family << ":\n";
  for (const CostModelPriors::Prior& p : priors.priors()) {
    std::cout << "  " << p.template_name << ": " << p.records << " trials of " << p.workloads
              << " workloads, " << p.model->rounds() << " boosting rounds\n";
  }
  if (!holdout.empty()) {
    TF_ASSIGN_OR_RETURN(const PriorEvaluation e, EvaluatePriors(priors, holdout, feature));
    std::cout << absl::StrFormat(
        "Held out: %d trials of %d workloads left out of training (%d workloads evaluated, "
        "%d trials): rank correlation %.3f; the fastest of the prior's top 10 is %.1f%% as "
        "fast as the fastest measured, of 10 at random %.1f%%\n",
        left_out, held_out_workloads.size(), e.workloads, e.trials, e.mean_spearman,
        100 * e.mean_top10_ratio, 100 * e.mean_random10_ratio);
  }
  std::cout << "Wrote " << out << "\n";
  return absl::OkStatus();
}

}  // namespace tunefleet
