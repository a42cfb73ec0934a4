// Cost-model priors: per template, an XGBoost cost model trained offline on
// the project's own tuning logs of one CPU family (every trial, slow and
// fast, over many workloads and models), shipped inside the binaries
// (data/priors/<family>.jsonl) beside the pretuned records. The XGBoost
// tuner takes the one of its template as its prior (xgb_tuner.h): the prior
// picks the task's first candidates after its pretuned ones, before the
// task has results of its own to fit, and then stays a base model whose
// weight follows how well it orders the task's own results and decays as
// they accumulate, so it is refined online and never overrules them.
//
//   // Offline (tunefleet train_prior): every trial of a family's logs.
//   TF_ASSIGN_OR_RETURN(CostModelPriors priors,
//                       CostModelPriors::Train(records, FeatureKind::kItervar, {}));
//   TF_ASSIGN_OR_RETURN(std::string text, priors.Serialize());
//   // Tuning: the prior of a task's template.
//   TF_ASSIGN_OR_RETURN(std::shared_ptr<const CostModelPriors> shipped,
//                       CostModelPriors::Shipped("x86_64-avx2"));
//   std::shared_ptr<const XgbCostModel> prior = shipped->For(task.name(), FeatureKind::kItervar);
//
// Labels are normalised per workload (each workload's fastest is 1), so one
// model spans shapes whose throughputs differ by orders of magnitude; the
// loop-nest features (features/) describe a config the same way for every
// shape of a template, which is what lets it carry to shapes it never saw.
//
// File format, one JSON object per line, one line per template:
//   {"template": "conv2d_nchwc.x86", "feature": "itervar", "num_features": 80,
//    "records": 24000, "workloads": 343, "model": <XGBoost's JSON model>}
#ifndef TUNEFLEET_TUNER_CORE_PRETUNED_COST_MODEL_PRIOR_H_
#define TUNEFLEET_TUNER_CORE_PRETUNED_COST_MODEL_PRIOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tuner_core/cost_model/xgb_cost_model.h"
#include "tuner_core/features/feature_extractor.h"
#include "tuner_core/records/record.h"

namespace tunefleet {

class CostModelPriors {
 public:
  struct Prior {
    std::string template_name;
    FeatureKind feature = FeatureKind::kItervar;
    int64_t records = 0;  // trials it learned from
    int workloads = 0;    // distinct workloads (shapes) among them
    std::shared_ptr<const XgbCostModel> model;
  };
  // What Train skipped, for the caller to report.
  struct TrainReport {
    int64_t records_used = 0;
    int64_t records_skipped = 0;        // unknown template, config outside its space, ...
    std::vector<std::string> warnings;  // one per skipped workload, naming it and why
  };

  CostModelPriors() = default;  // none

  // One model per template found in `records`, on `feature` rows, labels
  // normalised per workload; failed trials teach what to avoid (label 0).
  // A workload whose template cannot instantiate it, or a config that is
  // not in its space, is skipped (counted in `report`). InvalidArgument
  // when no template has a successful trial; a fit's error as is.
  [[nodiscard]] static absl::StatusOr<CostModelPriors> Train(const std::vector<Record>& records,
                                                             FeatureKind feature,
                                                             const XgbCostModelOptions& options,
                                                             TrainReport* report = nullptr);

  // The priors shipped for `family` (TargetSpec::family()); none when the
  // project ships none for it. Parsed once per process and family;
  // thread-safe.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const CostModelPriors>> Shipped(
      absl::string_view family);
  static std::vector<std::string> ShippedFamilies();
  // Errors of ReadFileToString, or Parse's.
  [[nodiscard]] static absl::StatusOr<CostModelPriors> ReadFile(const std::string& path);
  // The file format above; `source` names it in errors (InvalidArgument
  // naming the line and field, or XGBoost's error for a model it cannot
  // read; a template given twice is an error).
  [[nodiscard]] static absl::StatusOr<CostModelPriors> Parse(absl::string_view text,
                                                             absl::string_view source);
  [[nodiscard]] absl::StatusOr<std::string> Serialize() const;

  // The model of `template_name` on `feature` rows, or null.
  std::shared_ptr<const XgbCostModel> For(absl::string_view template_name,
                                          FeatureKind feature) const;
  const std::vector<Prior>& priors() const { return priors_; }

 private:
  std::vector<Prior> priors_;
};

// How well priors order the trials of workloads they did not learn from:
// per workload with at least 10 successful trials, the rank correlation of
// the prior's scores with the measured throughputs, and what the prior's
// top 10 would have found (the fastest measured among them over the
// fastest measured of all), beside what 10 of them taken at random would
// (the expectation, exact). Averaged over workloads; a random order's rank
// correlation is about 0.
struct PriorEvaluation {
  int workloads = 0;
  int64_t trials = 0;
  double mean_spearman = 0;
  double mean_top10_ratio = 0;
  double mean_random10_ratio = 0;
};
// `records` of templates without a prior, or that cannot be instantiated,
// are left out. InvalidArgument when no workload could be evaluated.
[[nodiscard]] absl::StatusOr<PriorEvaluation> EvaluatePriors(const CostModelPriors& priors,
                                                             const std::vector<Record>& records,
                                                             FeatureKind feature);

// The cost model options priors are trained and loaded with: the tuner's
// (XgbCostModelOptions: AutoTVM's depth, eta, ...), judged on the top 256
// of each fit (a prior covers hundreds of workloads, not one plan).
XgbCostModelOptions PriorModelOptions();

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_PRETUNED_COST_MODEL_PRIOR_H_
