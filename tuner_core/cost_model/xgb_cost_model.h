// XgbCostModel: the XGBoost cost model of AutoTVM's XGBTuner. It learns, from
// feature rows of measured configs, which unmeasured configs are fast.
//
// Labels are throughputs normalised per group (a group is one workload, e.g.
// one shape): label = throughput / best throughput of its group, 0 for a
// failed trial. With the "reg" loss (reg:squarederror) a prediction therefore
// reads as "fraction of the best GFLOPS measured so far"; with "rank"
// (rank:pairwise, one query group per workload) only its order matters.
// Training stops once the top-k recall on the training set has not improved
// for `early_stopping_rounds` rounds (AutoTVM's rule), at most `max_rounds`.
//
// Transfer learning: SetBaseModels({{base, weight}, ...}) adds the weighted
// sum of the base models' margins to every row, in training (XGBoost's
// base_margin) and in prediction, so this model learns the residual of the
// history; the tuner sets one base model per history shape and re-weighs
// them (and lowers their total) as its own measurements arrive.
//
//   TF_ASSIGN_OR_RETURN(auto model, XgbCostModel::Create(options));
//   TF_RETURN_IF_ERROR(model->Fit(rows, throughputs));
//   TF_ASSIGN_OR_RETURN(std::vector<float> scores, model->Predict(candidates));
//
// Deterministic for a given seed and inputs (nthread is 1 by default).
// Used from one thread at a time.
#ifndef TUNEFLEET_TUNER_CORE_COST_MODEL_XGB_COST_MODEL_H_
#define TUNEFLEET_TUNER_CORE_COST_MODEL_XGB_COST_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/cost_model/xgboost_api.h"

namespace tunefleet {

// Rows of features, row-major, all of one length.
struct FeatureMatrix {
  int num_features = 0;
  std::vector<float> values;  // num_rows() * num_features

  int64_t num_rows() const {
    return num_features > 0 ? static_cast<int64_t>(values.size()) / num_features : 0;
  }
  void AddRow(const std::vector<float>& row) {
    values.insert(values.end(), row.begin(), row.end());
  }
};

struct XgbCostModelOptions {
  std::string loss = "reg";  // "reg" (reg:squarederror) | "rank" (rank:pairwise)
  // AutoTVM's xgboost parameters.
  int max_depth = 3;
  double eta = 0.3;
  double gamma = 1e-4;
  double min_child_weight = 1;
  int max_rounds = 8000;
  int early_stopping_rounds = 20;
  int recall_k = 64;  // top-k of the stopping metric (the tuner's plan size)
  uint64_t seed = 0;
  int nthread = 1;

  // InvalidArgument naming the first bad field.
  [[nodiscard]] absl::Status Validate() const;
};

class XgbCostModel {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<XgbCostModel>> Create(
      const XgbCostModelOptions& options);

  // Trains a new model from scratch on `rows` with one throughput per row
  // (any higher-is-better unit; <= 0 means the trial failed). `group_sizes`
  // splits the rows into consecutive groups (one per workload) for label
  // normalisation and ranking; empty means one group. InvalidArgument for
  // mismatched sizes or no rows; Internal for an XGBoost failure.
  [[nodiscard]] absl::Status Fit(const FeatureMatrix& rows, const std::vector<double>& throughputs,
                                 const std::vector<unsigned>& group_sizes = {});

  // One score per row, higher = faster (see the header comment for the
  // scale). FailedPrecondition before the first Fit unless a base model is
  // set (then the weighted base prediction); InvalidArgument for rows of the
  // wrong width.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Predict(const FeatureMatrix& rows) const;

  // Transfer learning: each base (trained, same feature width) contributes
  // weight x its margin. Takes effect for later Fit and Predict calls and
  // replaces the earlier bases; bases with weight <= 0 or no model are
  // dropped. SetBaseModel(base, w) is SetBaseModels({{base, w}}).
  struct WeightedModel {
    std::shared_ptr<const XgbCostModel> model;
    double weight = 0;
  };
  void SetBaseModels(std::vector<WeightedModel> bases);
  void SetBaseModel(std::shared_ptr<const XgbCostModel> base, double weight);
  // Sum of the base weights; 0 without a base.
  double base_weight() const;

  // The trained model as XGBoost's JSON document, to ship as a prior
  // (tuner_core/pretuned/cost_model_prior.h). FailedPrecondition before the
  // first Fit, or for a model fitted on base models' margins (it is only a
  // residual without them).
  [[nodiscard]] absl::StatusOr<std::string> SaveJson() const;
  // A trained model from SaveJson's text, used with `options` (no bases).
  // Internal for text XGBoost cannot read; InvalidArgument for a model of
  // no features.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<XgbCostModel>> LoadJson(
      const XgbCostModelOptions& options, const std::string& json);

  bool trained() const { return booster_.has_value(); }
  int num_features() const { return num_features_; }
  // Boosting rounds of the last Fit.
  int rounds() const { return rounds_; }
  const XgbCostModelOptions& options() const { return options_; }

 private:
  explicit XgbCostModel(const XgbCostModelOptions& options) : options_(options) {}

  // Raw margins of this model alone plus its own base contribution.
  [[nodiscard]] absl::StatusOr<std::vector<float>> PredictMargin(const FeatureMatrix& rows) const;
  // Sum of weight x base margin per row, or empty without a base.
  [[nodiscard]] absl::StatusOr<std::vector<float>> BaseMargin(const FeatureMatrix& rows) const;
  [[nodiscard]] absl::StatusOr<XgbMatrix> MakeMatrix(const FeatureMatrix& rows) const;

  XgbCostModelOptions options_;
  int num_features_ = 0;
  int rounds_ = 0;
  bool fit_on_bases_ = false;         // the last Fit learned a residual over bases_
  std::vector<WeightedModel> bases_;  // weight > 0 each
  // Kept alive for the booster's prediction cache.
  std::optional<XgbMatrix> train_;
  std::optional<XgbBooster> booster_;
};

// Fraction of the k highest `labels` that are among the k highest `scores`
// (ties by position); 1 for k <= 0. The early-stopping metric.
double TopKRecall(const std::vector<float>& scores, const std::vector<float>& labels, int k);
// Spearman's rank correlation of two equally long series (ties ranked by
// position): 1 for the same order, about 0 for unrelated ones.
double RankCorrelation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tunefleet

#endif  // TUNEFLEET_TUNER_CORE_COST_MODEL_XGB_COST_MODEL_H_
